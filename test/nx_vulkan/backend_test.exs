defmodule Nx.Vulkan.BackendTest do
  use ExUnit.Case, async: true

  alias Nx.Vulkan.{Backend, Fallback, VulkanoBackend}

  setup do
    Nx.default_backend(Backend)
    :ok
  end

  describe "the README example" do
    test "sigmoid on the default device prints Nx.BinaryBackend's digits" do
      t = Nx.sigmoid(Nx.tensor([1.0, 2.0, 3.0, 4.0]))
      assert %Backend{device: device} = t.data
      assert device == Nx.Vulkan.default_device()

      assert Nx.to_flat_list(t) ==
               [0.7310586, 0.8807971, 0.95257413, 0.98201376] |> Enum.map(&f32/1)

      assert inspect(t) =~ "[0.7310586, 0.8807971, 0.95257413, 0.98201376]"
    end

    test "Nx.Vulkan.VulkanoBackend works verbatim as the default backend" do
      Nx.default_backend(VulkanoBackend)
      t = Nx.add(Nx.tensor([1, 2, 3]), 1)
      assert %Backend{} = t.data
      assert Nx.to_flat_list(t) == [2, 3, 4]
      assert Nx.to_flat_list(Nx.iota({3}, backend: VulkanoBackend)) == [0, 1, 2]
    end
  end

  defp f32(x), do: <<x::float-32-native>> |> then(fn <<y::float-32-native>> -> y end)

  describe "transfers" do
    test "to and from Nx.BinaryBackend, every device type, bits unchanged" do
      for type <- [
            u: 8,
            u: 16,
            u: 32,
            u: 64,
            s: 8,
            s: 16,
            s: 32,
            s: 64,
            f: 16,
            bf: 16,
            f: 32,
            f: 64
          ] do
        bin = :crypto.strong_rand_bytes(7 * 3 * div(elem(type, 1), 8))
        src = Nx.from_binary(bin, type, backend: Nx.BinaryBackend) |> Nx.reshape({7, 3})
        dev = Nx.backend_transfer(src, Backend)
        assert %Backend{ref: ref} = dev.data
        assert is_reference(ref)
        assert Nx.to_binary(dev) == bin
        back = Nx.backend_copy(dev, Nx.BinaryBackend)
        assert %Nx.BinaryBackend{} = back.data
        assert Nx.to_binary(back) == bin
        assert Nx.to_binary(dev) == bin, "backend_copy keeps the source"
      end
    end

    test "backend_transfer to the same backend and device returns the tensor" do
      t = Nx.tensor([1, 2, 3])
      assert Nx.backend_transfer(t, Backend) == t
      assert Nx.backend_transfer(t, {Backend, device: t.data.device}) == t
    end

    test "backend_transfer away frees the device tensor" do
      t = Nx.tensor([1.0, 2.0])
      h = Nx.backend_transfer(t, Nx.BinaryBackend)
      assert Nx.to_flat_list(h) == [1.0, 2.0]
      assert_raise ArgumentError, ~r/tensor was deallocated/, fn -> Nx.to_binary(t) end
    end

    test "backend_copy between tensors of this backend makes an independent tensor" do
      t = Nx.tensor([1, 2, 3])
      c = Nx.backend_copy(t, Backend)
      assert Nx.backend_deallocate(t) == :ok
      assert Nx.to_flat_list(c) == [1, 2, 3]
    end

    test "between devices (every device to every device)" do
      devices = Enum.map(Nx.Vulkan.devices(), & &1.index)

      for from <- devices, to <- devices do
        t = Nx.tensor([[1, 2], [3, 4]], backend: {Backend, device: from})
        assert t.data.device == from
        u = Nx.backend_transfer(t, {Backend, device: to})
        assert u.data.device == to
        assert Nx.to_flat_list(u) == [1, 2, 3, 4]
      end
    end

    test "to_binary honours its limit" do
      t = Nx.iota({10}, type: :s32, backend: Nx.BinaryBackend) |> Nx.backend_transfer(Backend)
      assert Nx.to_binary(t, limit: 3) == <<0::32-native, 1::32-native, 2::32-native>>
      assert byte_size(Nx.to_binary(t, limit: 0)) == 0
      assert byte_size(Nx.to_binary(t, limit: 100)) == 40
    end

    test "an argument from another backend is uploaded" do
      a = Nx.tensor([1, 2, 3])
      b = Nx.tensor([10, 20, 30], backend: Nx.BinaryBackend)
      assert Nx.to_flat_list(Nx.add(a, b)) == [11, 22, 33]
    end

    test "f8 and sub-byte types are device types (test/nx_vulkan/narrow_types_test.exs)" do
      t = Nx.tensor([1, -2, 3, 4], type: :s4)
      assert %Backend{ref: ref} = t.data
      assert is_reference(ref)
      assert Nx.to_flat_list(t) == [1, -2, 3, 4]
      assert inspect(Nx.tensor([1.0, 2.0], type: :f8)) =~ "device: "
      refute inspect(Nx.tensor([1.0, 2.0], type: :f8)) =~ "host-resident"
    end
  end

  describe "deallocation" do
    test "frees at once, :already_deallocated the second time, later use raises" do
      t = Nx.iota({1024}, type: :f32)
      assert Nx.backend_deallocate(t) == :ok
      assert Nx.backend_deallocate(t) == :already_deallocated
      assert_raise ArgumentError, ~r/to_binary.*tensor was deallocated/, fn -> Nx.to_binary(t) end
      assert_raise ArgumentError, ~r/tensor was deallocated/, fn -> Nx.exp(t) |> Nx.to_binary() end
      # Inspect turns exceptions into an #Inspect.Error<...> document that quotes the message.
      assert inspect(t) =~ "tensor was deallocated"
    end
  end

  describe "inspect" do
    test "shows the backend and the device" do
      t = Nx.tensor([1, 2])
      assert inspect(t) =~ "Nx.Vulkan.Backend<device: #{t.data.device}>"
    end

    test "can be turned off per process (the doctests need BinaryBackend's output)" do
      Nx.Vulkan.inspect_backend(false)
      assert inspect(Nx.tensor([1, 2])) == inspect(Nx.tensor([1, 2], backend: Nx.BinaryBackend))
    after
      Nx.Vulkan.inspect_backend(true)
    end

    test "honours the inspect limit" do
      t = Nx.iota({100})
      assert inspect(t, limit: 3) =~ "[0, 1, 2, ...]"
    end
  end

  describe "devices" do
    test "devices/0 lists name, type and capabilities" do
      [d | _] = devices = Nx.Vulkan.devices()
      assert length(devices) >= 1
      assert is_binary(d.name)
      assert d.type in [:discrete, :integrated, :virtual, :cpu, :other]
      assert is_boolean(d.capabilities.float64)
      assert is_boolean(d.capabilities.int64)
      assert is_integer(d.capabilities.subgroup_size)
      assert Nx.Vulkan.default_device() in Enum.map(devices, & &1.index)
    end

    test "backend option device: N, and a clear error for a device that does not exist" do
      t = Nx.tensor([1], backend: {Backend, device: 0})
      assert t.data.device == 0
      n = length(Nx.Vulkan.devices())

      assert_raise ArgumentError, ~r/no Vulkan device #{n}/, fn ->
        Nx.tensor([1], backend: {Backend, device: n})
      end

      assert_raise ArgumentError, ~r/unknown options/, fn ->
        Nx.tensor([1], backend: {Backend, gpu: 1})
      end
    end

    @tag timeout: 120_000
    test "with no Vulkan driver, the first use raises a clear Nx.Vulkan.Error" do
      paths = Enum.flat_map(:code.get_path(), &["-pa", List.to_string(&1)])

      script = """
      Application.ensure_all_started(:nx_vulkan)
      try do
        Nx.tensor([1.0], backend: Nx.Vulkan.Backend)
      rescue
        e in Nx.Vulkan.Error -> IO.puts("\#{inspect(e.kind)} " <> e.message)
      end
      """

      env = [
        {"VK_ICD_FILENAMES", "/nonexistent.json"},
        {"VK_DRIVER_FILES", "/nonexistent.json"},
        {"NX_VULKAN_VALIDATION", "0"}
      ]

      {out, 0} = System.cmd(System.find_executable("elixir"), paths ++ ["-e", script], env: env)
      assert out =~ ~r/^:no_device .*install a Vulkan driver/m
    end

    test "memory_stats/0 reports the default device" do
      stats = Nx.Vulkan.memory_stats()

      for key <- [
            :bytes_in_use,
            :bytes_cached,
            :live_buffers,
            :peak_bytes_in_use,
            :allocations,
            :constant_buffers,
            :constant_bytes
          ] do
        assert is_integer(Map.fetch!(stats, key))
      end
    end

    # exp's f32 fast path reads a table (2^(j/64)) on devices with f64.
    test "a math op's table is a constant of the device, not a live buffer" do
      x = Nx.tensor([0.5, 1.0, 2.0], type: :f32, backend: Nx.Vulkan.Backend)
      Nx.exp(x) |> Nx.to_binary()
      before = Nx.Vulkan.memory_stats()
      device = Enum.find(Nx.Vulkan.devices(), &(&1.index == Nx.Vulkan.default_device()))
      if device.capabilities.float64, do: assert(before.constant_buffers >= 1)
      for _ <- 1..5, do: Nx.exp(x) |> Nx.to_binary()
      after_calls = Nx.Vulkan.memory_stats()
      assert after_calls.constant_buffers == before.constant_buffers
      assert after_calls.constant_bytes == before.constant_bytes
    end
  end

  describe "host fallbacks and strict mode" do
    # dot is not built yet: a host fallback until the matmul issue lands.
    test "are counted per scope and in total, and emit telemetry" do
      a = Nx.iota({2, 2}, type: :f32)
      id = make_ref()
      parent = self()

      :telemetry.attach(
        "fallback-#{inspect(id)}",
        Fallback.event(),
        fn _event, measurements, meta, _ -> send(parent, {:fallback, measurements, meta}) end,
        nil
      )

      total = Fallback.total()
      {result, counts} = Fallback.count(fn -> Nx.dot(a, a) end)
      assert Nx.to_flat_list(result) == [2.0, 3.0, 6.0, 11.0]
      assert counts == %{dot: 1}
      assert Fallback.total() >= total + 1
      assert Nx.Vulkan.fallback_count() >= total + 1
      assert_receive {:fallback, %{count: 1}, %{op: :dot, reason: reason}}
      assert reason =~ "dot"
      :telemetry.detach("fallback-#{inspect(id)}")
    end

    test "strict mode raises naming the op, scoped to this process and this function" do
      a = Nx.iota({2, 2}, type: :f32)

      error =
        assert_raise Nx.Vulkan.HostFallbackError, fn -> Fallback.strict(fn -> Nx.dot(a, a) end) end

      assert error.op == :dot
      assert Exception.message(error) =~ "dot"

      # Other processes are not affected while this one is strict.
      Fallback.strict(fn ->
        task = Task.async(fn -> Nx.dot(a, a) |> Nx.to_flat_list() end)
        # (a generous timeout: the first use compiles kernels, slow on a loaded 2-core machine)
        assert Task.await(task, 120_000) == [2.0, 3.0, 6.0, 11.0]
      end)

      assert Fallback.strict(:allow, fn -> Nx.dot(a, a) end) |> Nx.to_flat_list() == [
               2.0,
               3.0,
               6.0,
               11.0
             ]

      assert Fallback.mode() == :allow
    end

    test "native ops do not fall back" do
      a = Nx.tensor([1.0, 2.0, 3.0])

      for {name, fun} <- native_examples(), native?(name) do
        assert {_, counts} = Fallback.count(fn -> fun.(a) end)
        assert counts == %{}, "#{name} fell back: #{inspect(counts)}"
      end
    end

    test "Nx.Block default implementations run op by op (no fallback)" do
      # logical_not is an Nx.Block; its default is Nx ops on this backend.
      t = Nx.tensor([0, 1, 2], type: :u8)
      {result, counts} = Fallback.count(fn -> Nx.logical_not(t) end)
      assert Nx.to_flat_list(result) == [1, 0, 0]
      if native?(:binary), do: assert(counts == %{})
    end
  end

  defp native?(function), do: MapSet.member?(Nx.Vulkan.native_functions(), function)

  defp native_examples do
    [
      unary: &Nx.exp/1,
      binary: &Nx.add(&1, &1),
      reduce: &Nx.sum/1,
      transpose: &Nx.transpose(Nx.reshape(&1, {3, 1})),
      reverse: &Nx.reverse/1,
      slice: &Nx.slice(&1, [1], [2]),
      concatenate: &Nx.concatenate([&1, &1]),
      as_type: &Nx.as_type(&1, :s32),
      reshape: &Nx.reshape(&1, {3, 1})
    ]
  end

  describe "many processes at once" do
    test "concurrent work on the backend gives each process its own right answer" do
      tasks =
        for i <- 1..32 do
          Task.async(fn ->
            t = Nx.iota({1000}, type: :s32) |> Nx.add(i)
            Nx.to_flat_list(t) |> Enum.sum()
          end)
        end

      sums = Task.await_many(tasks, 60_000)
      assert sums == for(i <- 1..32, do: div(999 * 1000, 2) + 1000 * i)
    end

    test "no scheduler is blocked: a normal process keeps running during device work" do
      parent = self()
      ticker = spawn(fn -> tick(parent, 0) end)
      big = Nx.iota({1_000_000}, type: :f32) |> Nx.multiply(1.0e-6)
      for _ <- 1..5, do: big |> Nx.exp() |> Nx.sum() |> Nx.to_number()
      send(ticker, :stop)
      assert_receive {:ticks, n} when n > 0
    end
  end

  defp tick(parent, n) do
    receive do
      :stop -> send(parent, {:ticks, n})
    after
      1 -> tick(parent, n + 1)
    end
  end

  describe "error messages" do
    test "bad arguments raise ArgumentError naming the function and the argument" do
      assert_raise ArgumentError,
                   ~r/^to_binary: argument 1 \(tensor\) must be a Vulkan tensor reference/,
                   fn ->
                     Nx.Vulkan.Native.to_binary(:not_a_tensor, nil)
                   end

      assert_raise ArgumentError, ~r/^from_binary: argument 2 \(type\)/, fn ->
        Nx.Vulkan.Native.from_binary(nil, {:q, 7}, {1}, <<0>>)
      end

      assert_raise ArgumentError, ~r/^from_binary: /, fn ->
        Nx.Vulkan.Native.from_binary(nil, {:f, 32}, {2}, <<0, 0, 0, 0>>)
      end
    end

    test "mixing devices is refused with a message" do
      if length(Nx.Vulkan.devices()) > 1 and native?(:binary) do
        a = Nx.tensor([1], backend: {Backend, device: 0})
        b = Nx.tensor([1], backend: {Backend, device: 1})
        assert_raise ArgumentError, ~r/different devices/, fn -> Nx.add(a, b) end
      end
    end
  end
end

defmodule Nx.Vulkan.MemoryStatsTest do
  # Not async: bytes_in_use is the device's, and tests running beside this one allocate and free.
  use ExUnit.Case, async: false

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    :ok
  end

  test "memory goes back down after deallocate and after garbage collection" do
    device = Nx.Vulkan.default_device()
    before = Nx.Vulkan.memory_stats(device).bytes_in_use
    bin = :binary.copy(<<1.0::float-32-native>>, 262_144)
    t = Nx.from_binary(bin, :f32)
    assert Nx.Vulkan.memory_stats(device).bytes_in_use >= before + byte_size(bin)
    :ok = Nx.backend_deallocate(t)
    assert Nx.Vulkan.memory_stats(device).bytes_in_use < before + byte_size(bin)

    # A tensor dropped by its process is freed by garbage collection.
    task = Task.async(fn -> Nx.from_binary(bin, :f32) |> Nx.to_binary(limit: 1) end)
    Task.await(task, 120_000)
    :erlang.garbage_collect()
    wait_until(fn -> Nx.Vulkan.memory_stats(device).bytes_in_use < before + byte_size(bin) end)
  end

  defp wait_until(fun, tries \\ 250) do
    cond do
      fun.() -> :ok
      tries == 0 -> flunk("condition not reached")
      true -> Process.sleep(20) && wait_until(fun, tries - 1)
    end
  end
end

defmodule Nx.Vulkan.FastF32MathTest do
  # Not async: the f32 math mode is the VM's, read by every op.
  use ExUnit.Case, async: false

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    on_exit(fn -> Nx.Vulkan.set_f32_math(:exact) end)
    :ok
  end

  # Ordered integer keys of f32 bit patterns: neighbouring floats differ by 1.
  defp keys(t) do
    for <<b::32-native <- Nx.to_binary(t)>> do
      if b >= 0x80000000, do: -(b - 0x80000000) - 1, else: b
    end
  end

  # Each case as {function, operands}; the reference is the exact mode's result, the correctly
  # rounded one (Nx.BinaryBackend's bits, but for erf_inv: Nx's f64 erf_inv is an approximation).
  defp run_all(cases) do
    for {fun, args} <- cases do
      apply(Nx, fun, Enum.map(args, &Nx.backend_transfer(&1, Nx.Vulkan.Backend))) |> keys()
    end
  end

  test "fast f32 math is within 1 ulp of the correctly rounded result, and differs from it somewhere" do
    key = Nx.Random.key(7)
    {u, _} = Nx.Random.uniform(key, -0.999, 0.999, shape: {65_536}, type: :f32)
    u = Nx.backend_transfer(u, Nx.BinaryBackend)
    big = Nx.multiply(u, 300.0)

    cases = [
      atan: [u],
      asin: [u],
      acos: [u],
      tan: [big],
      atanh: [u],
      asinh: [big],
      acosh: [Nx.add(Nx.abs(big), 1.0)],
      erf_inv: [u],
      atan2: [u, big],
      exp: [Nx.multiply(u, 80.0)],
      expm1: [u],
      log: [Nx.add(Nx.abs(big), 1.0e-3)],
      log1p: [u],
      sigmoid: [Nx.multiply(u, 20.0)],
      tanh: [Nx.multiply(u, 5.0)],
      sinh: [Nx.multiply(u, 10.0)],
      cosh: [Nx.multiply(u, 10.0)],
      sin: [big],
      cos: [big],
      erf: [Nx.multiply(u, 3.0)],
      erfc: [Nx.multiply(u, 5.0)],
      rsqrt: [Nx.add(Nx.abs(big), 1.0e-3)],
      cbrt: [big],
      pow: [Nx.add(Nx.abs(Nx.multiply(u, 4.0)), 1.0e-3), Nx.multiply(Nx.reverse(u), 20.0)]
    ]

    Nx.Vulkan.set_f32_math(:exact)
    exact = run_all(cases)
    assert Enum.at(exact, 0) == keys(Nx.atan(u))
    Nx.Vulkan.set_f32_math(:fast)
    fast = run_all(cases)

    one_ulp =
      for {{fun, _}, got, want} <- Enum.zip([cases, fast, exact]), reduce: 0 do
        count ->
          diffs = Enum.zip_with(got, want, &abs(&1 - &2))

          assert Enum.max(diffs) <= 1,
                 "#{fun}: a result more than 1 ulp from the correctly rounded one"

          count + Enum.count(diffs, &(&1 == 1))
      end

    # The mode is in force: some results are the neighbours of the correctly rounded ones.
    assert one_ulp > 0
  end

  test "an unknown mode is an error" do
    assert_raise ArgumentError, ~r/must be :exact or :fast, got :quick/, fn ->
      Nx.Vulkan.set_f32_math(:quick)
    end
  end
end
