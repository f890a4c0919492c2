defmodule Nx.Vulkan.DoctestTest do
  @moduledoc """
  Nx's own doctests on this backend, the way other Nx backends run them. Host fallbacks are
  allowed here (they are counted); `Nx.Vulkan.StrictDoctestTest` below runs them again with
  fallbacks refused.
  """
  use ExUnit.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    # Doctests compare printed output with Nx.BinaryBackend's: no backend line.
    Nx.Vulkan.inspect_backend(false)
    :ok
  end

  @excluded []

  doctest Nx, except: @excluded
end
