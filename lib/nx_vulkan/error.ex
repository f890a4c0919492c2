defmodule Nx.Vulkan.Error do
  @moduledoc """
  An error from the Vulkan device or the native core that is not a bad argument (those raise
  `ArgumentError`).

  `:kind` is one of `:unsupported` (the device lacks a type, feature or limit), `:not_built`
  (the C++ op library has no such op yet), `:out_of_device_memory` (free tensors and retry),
  `:out_of_memory`, `:device_lost`, `:no_device` (no Vulkan driver or device), `:internal`
  or `:nif_not_loaded`.
  """
  defexception [:message, kind: :internal]
end

defmodule Nx.Vulkan.HostFallbackError do
  @moduledoc """
  Raised in strict mode (`host_fallback: :raise`) when an operation would run on the host
  instead of the Vulkan device. `:op` names the operation, `:reason` says why it would leave
  the device.
  """
  defexception [:op, :reason]

  @impl true
  def message(%{op: op, reason: reason}) do
    "#{op}: host fallback refused in strict mode (#{reason}); " <>
      "allow it with Nx.Vulkan.Fallback.strict(:allow, fun) or config :nx_vulkan, host_fallback: :allow"
  end
end
