defmodule Nx.Vulkan.FuzzTest do
  @moduledoc """
  Random malformed calls straight to every NIF function: the VM must survive, and each call
  must return or raise ArgumentError (or Nx.Vulkan.Error for a device limitation such as an
  unsupported type or a too-large allocation), never crash.
  """
  use ExUnit.Case, async: true
  import Bitwise

  alias Nx.Vulkan.Native

  # 12,000 calls share the dirty schedulers with the rest of an async suite.
  @moduletag timeout: 600_000

  @calls 12_000
  @allowed_kinds [:unsupported, :not_built, :out_of_device_memory, :out_of_memory]

  # Terms that are each valid for some argument somewhere, and many that are valid nowhere.
  defp pool do
    t = Nx.tensor([[1.0, 2.0], [3.0, 4.0]], backend: Nx.Vulkan.Backend).data.ref
    s = Nx.tensor(3, type: :s64, backend: Nx.Vulkan.Backend).data.ref
    u = Nx.tensor([1, 0, 1], type: :u8, backend: Nx.Vulkan.Backend).data.ref
    dead = Nx.tensor([1], backend: Nx.Vulkan.Backend).data.ref
    :ok = Native.deallocate(dead)

    [
      t,
      s,
      u,
      dead,
      [t, t],
      [s],
      [t, dead],
      [],
      [1, 2],
      [0],
      [-1],
      [0, 1],
      [1, 0],
      {:f, 32},
      {:s, 64},
      {:u, 8},
      {:bf, 16},
      {:c, 64},
      {:f, 8},
      {:s, 4},
      {:f, 31},
      {:q, 8},
      {:f},
      {:f, -32},
      {"f", 32},
      {},
      {2},
      {2, 2},
      {3},
      {0},
      {1, 1, 1, 1},
      {7, 7, 7},
      {-1},
      {1 <<< 40},
      {1 <<< 62, 1 <<< 62},
      {1.5},
      {:a},
      0,
      1,
      2,
      -1,
      7,
      1 <<< 40,
      1 <<< 64,
      -(1 <<< 70),
      1.5,
      -0.0,
      :nan,
      :infinity,
      :neg_infinity,
      {1.0, 2.0},
      {:nan, 1},
      nil,
      true,
      false,
      :low,
      :high,
      :exp,
      :add,
      :sum,
      :argmax,
      :cumulative_sum,
      :not_an_op,
      :foo,
      :local,
      :ipc,
      "nx_vulkan:fd:v1:pid=1:fd=0",
      "",
      "abc",
      <<1, 2, 3>>,
      :binary.copy(<<0>>, 16),
      <<1::3>>,
      [{0, 0, 0}, {1, 1, 0}],
      [{0, 0, 0}],
      [{-1, 2, 1}, {0, 0, 9}],
      [{1, 2}],
      %{},
      %{a: 1},
      self(),
      make_ref(),
      fn -> :ok end,
      [1 | 2],
      [[1]],
      {t},
      {[t]}
    ]
  end

  test "#{@calls} random malformed calls to every NIF function" do
    seed = :erlang.phash2(make_ref())
    :rand.seed(:exsss, {seed, 17, 29})
    pool = List.to_tuple(pool())

    functions =
      Native.functions() |> Enum.reject(fn {name, _} -> name in [:devices, :built_functions] end)

    outcomes =
      for i <- 1..@calls, reduce: %{} do
        acc ->
          {name, arity} = Enum.at(functions, rem(i, length(functions)))
          args = for _ <- 1..arity//1, do: elem(pool, :rand.uniform(tuple_size(pool)) - 1)
          outcome = call(name, args, seed)
          Map.update(acc, outcome, 1, &(&1 + 1))
      end

    assert Enum.sum(Map.values(outcomes)) == @calls
    IO.puts("\nfuzz (seed #{seed}): #{inspect(outcomes)}")
    # The VM and the device still work.
    assert Nx.tensor([1.0, 2.0], backend: Nx.Vulkan.Backend) |> Nx.to_flat_list() == [1.0, 2.0]
  end

  # A valid call of every NIF function; the second test mutates one argument at a time, which
  # reaches the op library's own validation (shapes, axes, types, options) behind the terms.
  defp templates do
    t = Nx.tensor([[1.0, 2.0], [3.0, 4.0]], backend: Nx.Vulkan.Backend).data.ref
    row = Nx.tensor([[5.0, 6.0]], backend: Nx.Vulkan.Backend).data.ref
    p = Nx.tensor(0.0, backend: Nx.Vulkan.Backend).data.ref
    s = Nx.tensor(1, type: :s64, backend: Nx.Vulkan.Backend).data.ref
    u = Nx.tensor([1, 0, 1], type: :u8, backend: Nx.Vulkan.Backend).data.ref
    f32 = {:f, 32}

    # from_pointer needs a live export; devices without external_memory_fd skip both.
    pointers =
      if Enum.at(Nx.Vulkan.devices(), Nx.Vulkan.default_device()).capabilities.external_memory_fd do
        exported = Nx.tensor([[1.0, 2.0], [3.0, 4.0]], backend: Nx.Vulkan.Backend).data.ref
        {:ipc, handle, size} = Native.to_pointer(exported, :ipc)
        Process.put({__MODULE__, :exported}, exported)

        [
          to_pointer: [Nx.tensor([1.0], backend: Nx.Vulkan.Backend).data.ref, :ipc],
          from_pointer: [nil, f32, {2, 2}, :ipc, handle, size]
        ]
      else
        []
      end

    pointers ++
      [
        memory_stats: [nil],
        release_cached_memory: [nil],
        sync: [nil],
        validation_report: [],
        tensor_info: [t],
        deallocate: [Nx.tensor([1], backend: Nx.Vulkan.Backend).data.ref],
        from_binary: [nil, f32, {2}, <<0::64>>],
        to_binary: [t, nil],
        constant: [nil, f32, {2, 2}, 1.0],
        iota: [nil, {:s, 32}, {2, 3}, 1],
        eye: [nil, f32, {3, 3}],
        as_type: [t, {:s, 32}],
        bitcast: [t, {:s, 32}],
        unary: [:exp, t, f32],
        binary: [:add, t, row, f32, {2, 2}],
        select: [u, u, u, {:u, 8}, {3}],
        clip: [t, p, p, f32],
        reshape: [t, {4}],
        squeeze: [row, [0]],
        broadcast: [t, {3, 2, 2}, [1, 2]],
        transpose: [t, [1, 0]],
        pad: [t, p, [{0, 0, 0}, {1, 1, 1}], f32],
        reverse: [t, [0]],
        slice: [t, [0, 0], [1, 2], [1, 1]],
        slice_dynamic: [t, [s, s], [1, 1], [1, 1]],
        put_slice: [t, [1, 0], row, f32],
        put_slice_dynamic: [t, [s, s], row, f32],
        concatenate: [[t, row], 0, f32],
        stack: [[t, t], 1, f32],
        reduce: [:sum, t, [0], false, f32],
        arg_reduce: [:argmax, t, 1, true, :high, {:s, 32}],
        cumulative: [:cumulative_sum, t, 1, true, f32]
      ]
  end

  test "every NIF function's valid call returns" do
    built = Nx.Vulkan.native_functions()

    for {name, args} <- templates(),
        MapSet.member?(built, name) or
          name in [
            :memory_stats,
            :release_cached_memory,
            :sync,
            :validation_report,
            :tensor_info,
            :deallocate
          ] do
      apply(Native, name, args)
    end
  end

  test "#{@calls} valid calls with one argument replaced by a random term" do
    seed = :erlang.phash2(make_ref())
    :rand.seed(:exsss, {seed, 3, 5})
    pool = List.to_tuple(pool())

    outcomes =
      for i <- 1..@calls, reduce: %{} do
        acc ->
          # Fresh templates now and then: deallocate and the mutations may consume them.
          templates = if rem(i, 500) == 1, do: templates(), else: Process.get(:templates)
          Process.put(:templates, templates)
          {name, args} = Enum.at(templates, rem(i, length(templates)))

          args =
            case args do
              [] ->
                []

              _ ->
                List.replace_at(
                  args,
                  :rand.uniform(length(args)) - 1,
                  elem(pool, :rand.uniform(tuple_size(pool)) - 1)
                )
            end

          Map.update(acc, call(name, args, seed), 1, &(&1 + 1))
      end

    IO.puts("\nfuzz, one argument replaced (seed #{seed}): #{inspect(outcomes)}")
    assert Nx.tensor([1.0, 2.0], backend: Nx.Vulkan.Backend) |> Nx.to_flat_list() == [1.0, 2.0]
  end

  defp call(name, args, seed) do
    apply(Native, name, args)
    :returned
  rescue
    e in ArgumentError ->
      assert e.message =~ ~r/^\w+: /,
             "#{name}#{inspect(List.to_tuple(args))} (seed #{seed}): #{e.message}"

      :argument_error

    e in Nx.Vulkan.Error ->
      assert e.kind in @allowed_kinds,
             "#{name}#{inspect(List.to_tuple(args))} (seed #{seed}) raised #{inspect(e)}"

      e.kind
  end
end
