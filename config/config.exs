import Config

# Host fallbacks: :allow (default), :warn or :raise (strict mode). See Nx.Vulkan.Fallback.
config :nx_vulkan, host_fallback: :allow
