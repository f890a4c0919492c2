defmodule Nx.Vulkan.PointerTest do
  @moduledoc """
  Nx.to_pointer/2 and Nx.from_pointer/5 on Nx.Vulkan.Backend: :ipc (opaque fds through
  VK_KHR_external_memory_fd) and :local (host addresses, VK_EXT_external_memory_host), their
  aliasing and ownership, and the errors for bad pointers.
  """
  use ExUnit.Case, async: true

  alias Nx.Vulkan.Backend

  setup do
    Nx.default_backend(Backend)
    caps = Enum.at(Nx.Vulkan.devices(), Nx.Vulkan.default_device()).capabilities
    {:ok, caps: caps}
  end

  defp device_types do
    [u: 8, u: 16, u: 32, u: 64, s: 8, s: 16, s: 32, s: 64, f: 16, bf: 16, f: 32, f: 64]
  end

  describe "mode: :ipc" do
    @describetag :ipc

    test "round trip through Nx.to_pointer/Nx.from_pointer, every device type", %{caps: caps} do
      if caps.external_memory_fd do
        for type <- device_types() do
          bin = :crypto.strong_rand_bytes(6 * div(elem(type, 1), 8))
          t = Nx.from_binary(bin, type) |> Nx.reshape({2, 3})
          pointer = Nx.to_pointer(t, mode: :ipc)
          assert %Nx.Pointer{kind: :ipc, address: nil, data_size: size, handle: handle} = pointer
          assert size == byte_size(bin)
          assert handle =~ ~r/^nx_vulkan:fd:v1:pid=#{System.pid()}:fd=\d+:/
          assert Nx.to_binary(t) == bin, "the export leaves the tensor's value alone"

          back = Nx.from_pointer(Backend, pointer, type, {2, 3}, names: [:rows, nil])
          assert %Backend{} = back.data
          assert back.names == [:rows, nil]
          assert back.type == Nx.Type.normalize!(type)
          assert Nx.to_binary(back) == bin
        end
      else
        assert_raise Nx.Vulkan.Error, ~r/^to_pointer: unsupported on this device/, fn ->
          Nx.to_pointer(Nx.tensor([1.0]), mode: :ipc)
        end
      end
    end

    test "a second export returns the same handle; two imports alias one memory", %{caps: caps} do
      if caps.external_memory_fd do
        t = Nx.iota({4, 4}, type: :f32)
        p1 = Nx.to_pointer(t, mode: :ipc)
        assert Nx.to_pointer(t, mode: :ipc) == p1
        a = Nx.from_pointer({Backend, device: Nx.Vulkan.default_device()}, p1, :f32, {4, 4})
        b = Nx.from_pointer(Backend, p1, :f32, {16})
        assert Nx.to_binary(a) == Nx.to_binary(t)
        assert Nx.to_binary(b) == Nx.to_binary(t)
        # Imported tensors are ordinary tensors to every op.
        assert Nx.to_flat_list(Nx.add(a, 1)) == Enum.map(1..16, &(&1 * 1.0))
      end
    end

    test "the handle keeps the export alive; the import outlives the exporter", %{caps: caps} do
      if caps.external_memory_fd do
        t = Nx.tensor([1, 2, 3], type: :s32)
        p = Nx.to_pointer(t, mode: :ipc)
        assert Nx.backend_deallocate(t) == :ok
        :erlang.garbage_collect()
        # The handle binary still holds the exported memory: it can be imported.
        back = Nx.from_pointer(Backend, p, :s32, {3})
        assert Nx.to_flat_list(back) == [1, 2, 3]
        assert Nx.to_flat_list(Nx.from_pointer(Backend, p, :s32, {3})) == [1, 2, 3]
      end
    end

    test "importing after the tensor and its handle are gone raises", %{caps: caps} do
      if caps.external_memory_fd do
        # The bytes of the handle without the resource that holds the export, as another OS
        # process would have them.
        {copy, back} =
          (fn ->
             t = Nx.tensor([4, 5, 6], type: :s32)
             p = Nx.to_pointer(t, mode: :ipc)
             copy = %{p | handle: :binary.copy(p.handle)}
             {copy, Nx.from_pointer(Backend, p, :s32, {3})}
           end).()

        :erlang.garbage_collect()
        Nx.Vulkan.flush()
        assert Nx.to_flat_list(back) == [4, 5, 6]

        assert_raise ArgumentError, ~r/^from_pointer: .*the exported tensor was freed/, fn ->
          Nx.from_pointer(Backend, copy, :s32, {3})
        end
      end
    end

    @tag timeout: 120_000
    test "another BEAM (another OS process) imports the handle", %{caps: caps} do
      elixir = System.find_executable("elixir")

      if caps.external_memory_fd and elixir do
        bin = :crypto.strong_rand_bytes(4 * 100)
        t = Nx.from_binary(bin, :f32)
        p = Nx.to_pointer(t, mode: :ipc)
        ebin = Path.wildcard(Path.join(Mix.Project.build_path(), "lib/*/ebin"))

        code = """
        [handle, size] = System.argv()
        pointer = %Nx.Pointer{kind: :ipc, handle: handle, data_size: String.to_integer(size)}
        t = Nx.from_pointer(Nx.Vulkan.Backend, pointer, :f32, {100})
        IO.write(Base.encode16(Nx.to_binary(t)))
        """

        args = Enum.flat_map(ebin, &["-pa", &1]) ++ ["-e", code, p.handle, "#{p.data_size}"]
        {out, status} = System.cmd(elixir, args, stderr_to_stdout: true)
        assert status == 0, out
        assert String.ends_with?(out, Base.encode16(bin)), out
        # The exporter kept the export alive until the child was done.
        assert Nx.to_binary(t) == bin
      end
    end

    test "data_size must match the shape", %{caps: caps} do
      if caps.external_memory_fd do
        p = Nx.to_pointer(Nx.tensor([1.0, 2.0, 3.0]), mode: :ipc)

        assert_raise ArgumentError, ~r/^from_pointer: data_size 12 does not match .*8 bytes/, fn ->
          Nx.from_pointer(Backend, p, :f32, {2})
        end

        assert_raise ArgumentError, ~r/^from_pointer: :data_size must be a non-negative/, fn ->
          Nx.from_pointer(Backend, %{p | data_size: nil}, :f32, {3})
        end
      end
    end

    test "malformed handles raise ArgumentError naming from_pointer", %{caps: caps} do
      if caps.external_memory_fd do
        for handle <- ["", "nx_vulkan:fd:v1:pid=1", "garbage:handle"] do
          assert_raise ArgumentError, ~r/^from_pointer: .*IPC handle/, fn ->
            Nx.from_pointer(
              Backend,
              %Nx.Pointer{kind: :ipc, handle: handle, data_size: 4},
              :f32,
              {1}
            )
          end
        end

        assert_raise ArgumentError, ~r/^from_pointer: an :ipc pointer needs a binary :handle/, fn ->
          Nx.from_pointer(Backend, %Nx.Pointer{kind: :ipc, handle: 12, data_size: 4}, :f32, {1})
        end
      end
    end
  end

  describe "mode: :local" do
    test "the address of a host-visible tensor, or :unsupported", %{caps: caps} do
      t = Nx.tensor([10, 20, 30], type: :u8)

      if caps.unified_memory and System.get_env("NX_VULKAN_FORCE_STAGING") != "1" do
        assert %Nx.Pointer{kind: :local, address: address, data_size: 3, handle: nil} =
                 Nx.to_pointer(t)

        assert is_integer(address) and address > 0
        assert Nx.to_pointer(t, mode: :local) == Nx.to_pointer(t)
      else
        assert_raise Nx.Vulkan.Error, ~r/^to_pointer: unsupported on this device/, fn ->
          Nx.to_pointer(t, mode: :local)
        end
      end
    end

    test "from_pointer imports aligned host memory in place", %{caps: caps} do
      if caps.external_memory_host do
        align = caps.min_imported_host_pointer_alignment

        # A mapped tensor's memory is host memory of this process: import it when it is aligned.
        if caps.unified_memory and System.get_env("NX_VULKAN_FORCE_STAGING") != "1" do
          src = Nx.iota({1024}, type: :s32)
          p = Nx.to_pointer(src, mode: :local)

          if rem(p.address, align) == 0 do
            back = Nx.from_pointer(Backend, p, :s32, {32, 32})
            assert Nx.to_binary(back) == Nx.to_binary(src)
          else
            assert_raise ArgumentError, ~r/minImportedHostPointerAlignment/, fn ->
              Nx.from_pointer(Backend, p, :s32, {32, 32})
            end
          end
        end

        assert_raise ArgumentError, ~r/^from_pointer: address 1 is not a non-zero multiple/, fn ->
          Nx.from_pointer(Backend, %Nx.Pointer{kind: :local, address: 1, data_size: 4}, :f32, {1})
        end

        assert_raise ArgumentError, ~r/^from_pointer: address range .* is not readable/, fn ->
          Nx.from_pointer(
            Backend,
            %Nx.Pointer{kind: :local, address: align, data_size: 4},
            :f32,
            {1}
          )
        end
      end
    end
  end

  test "bad options and non-pointers raise ArgumentError" do
    t = Nx.tensor([1.0])

    assert_raise ArgumentError, ~r/^to_pointer: :mode must be :local or :ipc, got: :shared/, fn ->
      Nx.to_pointer(t, mode: :shared)
    end

    assert_raise ArgumentError, ~r/^to_pointer: unknown options \[:bogus\]/, fn ->
      Nx.to_pointer(t, bogus: 1)
    end

    assert_raise ArgumentError, ~r/^from_pointer: expected an %Nx.Pointer/, fn ->
      Nx.from_pointer(Backend, {:local, 1234}, :f32, {1})
    end

    # Sub-byte types are packed: s4[3] is 2 bytes.
    assert_raise ArgumentError,
                 ~r/^from_pointer: data_size 3 does not match the s4\{3\} tensor's 2 bytes/,
                 fn ->
                   Nx.from_pointer(
                     Backend,
                     %Nx.Pointer{kind: :local, address: 4096, data_size: 3},
                     :s4,
                     {3}
                   )
                 end

    assert_raise ArgumentError, ~r/^from_pointer: unknown options \[:bogus\]/, fn ->
      Nx.from_pointer(Backend, %Nx.Pointer{kind: :local, address: 4096, data_size: 4}, :f32, {1},
        bogus: 1
      )
    end
  end

  test "sub-byte tensors round trip through an :ipc pointer" do
    t = Nx.tensor([1, -2, 3, -8, 7], type: :s4)
    pointer = Nx.to_pointer(t, mode: :ipc)
    assert pointer.data_size == 3
    back = Nx.from_pointer(Backend, pointer, :s4, {5})
    assert Nx.to_flat_list(back) == [1, -2, 3, -8, 7]
  end
end
