defmodule Nx.Vulkan.VulkanoBackend do
  @moduledoc """
  `Nx.Vulkan.Backend` under the name the original (Rust/vulkano) nx_vulkan used, so existing
  code keeps working verbatim:

      Nx.default_backend(Nx.Vulkan.VulkanoBackend)

  Every callback delegates to `Nx.Vulkan.Backend`; tensors it creates are
  `Nx.Vulkan.Backend` tensors, so the behaviour is identical.
  """
  @behaviour Nx.Backend

  for {name, arity} <- Nx.Backend.behaviour_info(:callbacks) do
    args = Macro.generate_arguments(arity, __MODULE__)
    @impl true
    defdelegate unquote(name)(unquote_splicing(args)), to: Nx.Vulkan.Backend
  end
end
