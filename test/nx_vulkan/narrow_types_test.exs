defmodule Nx.Vulkan.NarrowTypesTest do
  @moduledoc """
  The 8-bit floats (`:f8`, E5M2, and `:f8_e4m3fn`) and the sub-byte integers (`:u2`, `:u4`,
  `:s2`, `:s4`) on the device, against Nx.BinaryBackend, with host fallbacks refused.
  """
  use ExUnit.Case, async: true

  alias Nx.Vulkan.{Backend, Fallback}

  setup do
    Nx.default_backend(Backend)
    Fallback.put_mode(:raise)
    :ok
  end

  @f8_types [{:f, 8}, {:f8_e4m3fn, 8}]
  @sub_byte_types [{:u, 2}, {:u, 4}, {:s, 2}, {:s, 4}]

  defp host(t), do: Nx.backend_copy(t, Nx.BinaryBackend)

  # A host tensor of n random elements (Nx.from_binary takes whole bytes only).
  defp random_host({kind, size} = type, n) when kind in [:u, :s] and size < 8 do
    {lo, hi} =
      if kind == :u, do: {0, 2 ** size - 1}, else: {-(2 ** (size - 1)), 2 ** (size - 1) - 1}

    Nx.tensor(Enum.map(1..n, fn _ -> Enum.random(lo..hi) end),
      type: type,
      backend: Nx.BinaryBackend
    )
  end

  defp random_host(type, n),
    do: Nx.from_binary(:crypto.strong_rand_bytes(n), type, backend: Nx.BinaryBackend)

  # The bit patterns of an 8-bit type, as a device tensor and as a host one, but for the zeros
  # (0x00, 0x80), whose sign Nx.BinaryBackend loses under OTP 25 (test "signed zeros" below).
  defp all_patterns(type) do
    bin = for i <- 0..255, i not in [0x00, 0x80], into: <<>>, do: <<i>>
    {Nx.from_binary(bin, type), Nx.from_binary(bin, type, backend: Nx.BinaryBackend)}
  end

  test "transfers of odd lengths are byte copies of Nx's binary layout" do
    for type <- @f8_types ++ @sub_byte_types, n <- [1, 3, 5, 7, 9, 1001] do
      src = random_host(type, n)
      bin = Nx.to_binary(src)
      dev = Nx.backend_transfer(src, Backend)
      assert %Backend{ref: ref} = dev.data
      assert is_reference(ref)
      assert Nx.to_binary(dev) == bin, "#{inspect(type)} n=#{n}"
      assert Nx.to_binary(dev, limit: 2) == Nx.to_binary(src, limit: 2)
      assert Nx.to_binary(host(dev)) == bin
      assert Nx.to_flat_list(dev) == Nx.to_flat_list(src)
    end
  end

  test "Nx.tensor and Nx.bit_size of the narrow types" do
    assert Nx.to_binary(Nx.tensor([1, 2, 3], type: :u4)) == <<0x12, 3::4>>
    assert Nx.to_binary(Nx.tensor([1, -1, -2], type: :s2)) == <<0b011110::6>>
    assert Nx.bit_size(Nx.tensor([[1, 2, 3], [3, 2, 1]], type: :u2)) == 12
    assert Nx.to_flat_list(Nx.tensor([1, 2, 3], type: :f8)) == [1.0, 2.0, 3.0]
    assert Nx.to_flat_list(Nx.tensor([:infinity, :nan], type: :f8_e4m3fn)) == [448.0, :nan]
  end

  test "as_type of every f8 bit pattern to every type matches Nx.BinaryBackend" do
    targets =
      [u: 2, u: 4, u: 8, u: 16, u: 32, u: 64, s: 2, s: 4, s: 8, s: 16, s: 32, s: 64] ++
        [f: 8, f8_e4m3fn: 8, f: 16, bf: 16, f: 32, f: 64]

    for from <- @f8_types, to <- targets, to != from do
      {dev, ref} = all_patterns(from)
      want = Nx.to_binary(Nx.as_type(ref, to))
      got = Nx.to_binary(Nx.as_type(dev, to))

      assert got == want, "#{inspect(from)} -> #{inspect(to)}"
    end
  end

  test "signed zeros keep their sign, as Nx.Floating's code says" do
    # Erlang before OTP 27 does not tell 0.0 from -0.0 in patterns, so under OTP 25
    # Nx.Floating.load_f8 reads both f8 zeros as -0.0 (the compiler merges the branches of its
    # `if(sign == 0, do: 0.0, else: -0.0)`) and dump_f8_e4m3fn(-0.0) reaches its 0.0 clause
    # (0x00), not its own -0.0 clause (0x80). We follow the code's clauses, as OTP 27 runs them.
    zeros = Nx.from_binary(<<0x00, 0x80>>, :f8)
    assert Nx.to_binary(Nx.as_type(zeros, :f32)) == <<0.0::float-32-native, -0.0::float-32-native>>
    assert Nx.to_binary(Nx.as_type(zeros, :f8_e4m3fn)) == <<0x00, 0x80>>
    assert Nx.to_binary(Nx.negate(Nx.from_binary(<<0x00>>, :f8_e4m3fn))) == <<0x80>>
  end

  test "as_type into f8 from floats and integers matches Nx.BinaryBackend" do
    values =
      [1.0, -2.5, 448.0, 449.0, 500.0, 1.96, 0.1, 3.0e-5, 1.0e-6, 65519.0, 70000.0] ++
        [:infinity, :neg_infinity, :nan, 0.3, -0.7, 1.0e-3, 57344.0, 61440.0]

    for from <- [:f64, :f32, :f16, :bf16], to <- @f8_types do
      ref = Nx.tensor(values, type: from, backend: Nx.BinaryBackend)
      dev = Nx.tensor(values, type: from)

      assert Nx.to_binary(Nx.as_type(dev, to)) == Nx.to_binary(Nx.as_type(ref, to)),
             "#{from} -> #{inspect(to)}"
    end

    ints = [0, 1, -1, 7, -8, 100, 447, 449, 1000, 65519, 65520, -70000]

    for from <- [:s32, :s64], to <- @f8_types ++ @sub_byte_types do
      ref = Nx.tensor(ints, type: from, backend: Nx.BinaryBackend)
      dev = Nx.tensor(ints, type: from)

      assert Nx.to_binary(Nx.as_type(dev, to)) == Nx.to_binary(Nx.as_type(ref, to)),
             "#{from} -> #{inspect(to)}"
    end
  end

  test "elementwise ops, reductions, slices and concatenation of sub-byte tensors" do
    for type <- @sub_byte_types, n <- [3, 7, 1001] do
      {ha, hb} = {random_host(type, n), random_host(type, n)}
      {a, b} = {Nx.backend_copy(ha, Backend), Nx.backend_copy(hb, Backend)}

      for op <- [:add, :multiply, :bitwise_xor, :max, :less] do
        assert Nx.to_binary(apply(Nx, op, [a, b])) == Nx.to_binary(apply(Nx, op, [ha, hb])),
               "#{op} #{inspect(type)} n=#{n}"
      end

      assert Nx.to_binary(Nx.negate(a)) == Nx.to_binary(Nx.negate(ha))
      assert Nx.to_number(Nx.sum(a)) == Nx.to_number(Nx.sum(ha))
      assert Nx.to_number(Nx.reduce_max(a)) == Nx.to_number(Nx.reduce_max(ha))
      assert Nx.to_binary(Nx.cumulative_sum(a)) == Nx.to_binary(Nx.cumulative_sum(ha))
      assert Nx.to_binary(Nx.slice(a, [1], [n - 2])) == Nx.to_binary(Nx.slice(ha, [1], [n - 2]))

      assert Nx.to_binary(Nx.concatenate([a, b, a])) ==
               Nx.to_binary(Nx.concatenate([ha, hb, ha]))

      assert Nx.to_binary(Nx.reverse(a)) == Nx.to_binary(Nx.reverse(ha))
    end
  end

  test "f8 arithmetic matches Nx.BinaryBackend" do
    for type <- @f8_types do
      {a, ha} = all_patterns(type)
      b = Nx.reverse(a)
      hb = Nx.reverse(ha)

      for op <- [:add, :multiply, :subtract, :max] do
        assert Nx.to_binary(apply(Nx, op, [a, b])) == Nx.to_binary(apply(Nx, op, [ha, hb])),
               "#{op} #{inspect(type)}"
      end

      assert Nx.to_binary(Nx.negate(a)) == Nx.to_binary(Nx.negate(ha))
      assert Nx.to_binary(Nx.equal(a, b)) == Nx.to_binary(Nx.equal(ha, hb))
      finite = Nx.select(Nx.is_nan(a), 0, a)
      hfinite = Nx.select(Nx.is_nan(ha), 0, ha)
      assert Nx.to_binary(Nx.reduce_max(finite)) == Nx.to_binary(Nx.reduce_max(hfinite))
    end
  end
end
