defmodule Nx.Vulkan.StrictGlobalTest do
  # Changes the VM-wide setting: not async, so it runs after every async module.
  use ExUnit.Case, async: false

  setup do
    on_exit(fn -> Application.put_env(:nx_vulkan, :host_fallback, :allow) end)
  end

  test "Nx.Vulkan.strict/1 and the :host_fallback application key apply to every process" do
    a = Nx.iota({2, 2}, type: :f32, backend: Nx.Vulkan.Backend)

    Nx.Vulkan.strict(true)
    assert Nx.Vulkan.strict?()
    assert_raise Nx.Vulkan.HostFallbackError, ~r/^dot: /, fn -> Nx.dot(a, a) end
    task = Task.async(fn -> catch_error(Nx.dot(a, a)) end)
    assert %Nx.Vulkan.HostFallbackError{op: :dot} = Task.await(task, 120_000)

    # A per-process scope still overrides the global setting.
    assert Nx.Vulkan.Fallback.strict(:allow, fn -> Nx.dot(a, a) end) |> Nx.to_flat_list() ==
             [2.0, 3.0, 6.0, 11.0]

    Nx.Vulkan.strict(false)
    refute Nx.Vulkan.strict?()
    assert Nx.dot(a, a) |> Nx.to_flat_list() == [2.0, 3.0, 6.0, 11.0]

    Application.put_env(:nx_vulkan, :host_fallback, :raise)
    assert_raise Nx.Vulkan.HostFallbackError, fn -> Nx.dot(a, a) end

    Application.put_env(:nx_vulkan, :host_fallback, :bogus)
    assert_raise ArgumentError, ~r/host_fallback mode must be one of/, fn -> Nx.dot(a, a) end
  end

  test ":warn logs the op and runs it" do
    a = Nx.iota({2, 2}, type: :f32, backend: Nx.Vulkan.Backend)
    Application.put_env(:nx_vulkan, :host_fallback, :warn)

    log =
      ExUnit.CaptureLog.capture_log(fn ->
        assert Nx.to_flat_list(Nx.dot(a, a)) == [2.0, 3.0, 6.0, 11.0]
      end)

    assert log =~ "dot runs on the host"
  end
end
