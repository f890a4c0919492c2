import Config

# Host fallbacks: :allow (default), :warn or :raise (strict mode). See Nx.Vulkan.Fallback.
config :nx_vulkan, host_fallback: :allow

# The Vulkan validation layer (as NX_VULKAN_VALIDATION=1): on for this project's tests, where any
# validation message fails the suite (test/test_helper.exs).
config :nx_vulkan, validation: config_env() == :test
