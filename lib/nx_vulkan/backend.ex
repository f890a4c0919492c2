defmodule Nx.Vulkan.Backend do
  @moduledoc """
  The Nx backend: tensors live on a Vulkan device and every callback is one native call.

      Nx.default_backend(Nx.Vulkan.Backend)
      Nx.tensor([1, 2, 3], backend: {Nx.Vulkan.Backend, device: 0})

  Options: `:device`, a device index from `Nx.Vulkan.devices/0` (default:
  `Nx.Vulkan.default_device/0`).

  The C++ op library validates arguments and does the work; this module only maps callbacks to
  native functions. A callback whose native function is not built yet, or that the device
  cannot run (for example a type it cannot hold), runs on `Nx.BinaryBackend` instead: see
  `Nx.Vulkan.Fallback` for how those host fallbacks are counted and refused in strict mode.

  Tensors are NIF resources: freed when garbage collected, or at once by
  `Nx.backend_deallocate/1`; any later use raises an `ArgumentError` saying the tensor was
  deallocated. Every Nx type is a device type, the 8-bit floats (`{:f, 8}`, `{:f8_e4m3fn, 8}`) and
  the sub-byte integers (`{:u, 2}`, `{:s, 4}`, ...) included: they are stored packed exactly as
  Nx.BinaryBackend lays them out. Only a type this device cannot hold (`{:f, 64}` without
  shaderFloat64, say) is kept on the host inside this backend, where every op on it is a host
  fallback.
  """
  @behaviour Nx.Backend

  # ref: the NIF tensor resource; host: a Nx.BinaryBackend struct for host-resident tensors.
  defstruct [:ref, :device, :host]

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.{Fallback, Native}

  @vulkan_backends [__MODULE__, Nx.Vulkan.VulkanoBackend]

  ## Options and creation

  @impl true
  def init(opts) do
    case Keyword.validate(opts, [:device]) do
      {:ok, opts} ->
        device = opts[:device]

        unless is_nil(device) or (is_integer(device) and device >= 0) do
          raise ArgumentError,
                "Nx.Vulkan.Backend: :device must be a device index, got: #{inspect(device)}"
        end

        opts

      {:error, keys} ->
        raise ArgumentError,
              "Nx.Vulkan.Backend: unknown options #{inspect(keys)} (valid: [:device])"
    end
  end

  @impl true
  def constant(%T{} = out, value, opts) do
    device = device_opt(opts)

    run(:constant, :constant, [out, value, opts], device, fn d ->
      wrap(out, Native.constant(d, out.type, out.shape, scalar(value)), d)
    end)
  end

  @impl true
  def from_binary(%T{} = out, data, opts) do
    # iodata of bitstrings (sub-byte types) too
    upload(out, :erlang.list_to_bitstring([data]), device_opt(opts), :from_binary)
  end

  @impl true
  def eye(%T{} = out, opts) do
    device = device_opt(opts)
    run(:eye, :eye, [out, opts], device, &wrap(out, Native.eye(&1, out.type, out.shape), &1))
  end

  @impl true
  def iota(%T{} = out, axis, opts) do
    device = device_opt(opts)

    run(:iota, :iota, [out, axis, opts], device, fn d ->
      wrap(out, Native.iota(d, out.type, out.shape, axis), d)
    end)
  end

  ## Memory

  @impl true
  def backend_deallocate(%T{data: %__MODULE__{ref: nil}}), do: :ok
  def backend_deallocate(%T{data: %__MODULE__{ref: ref}}), do: Native.deallocate(ref)

  @impl true
  def backend_copy(%T{} = t, backend, opts) when backend in @vulkan_backends do
    copy_to_device(t, device_opt(opts))
  end

  def backend_copy(%T{} = t, backend, opts), do: backend.from_binary(t, binary!(t), opts)

  @impl true
  def backend_transfer(%T{data: %__MODULE__{device: d}} = t, backend, opts)
      when backend in @vulkan_backends do
    case device_opt(opts) do
      ^d ->
        t

      other ->
        copy = copy_to_device(t, other)
        backend_deallocate(t)
        copy
    end
  end

  def backend_transfer(%T{} = t, backend, opts) do
    result = backend.from_binary(t, binary!(t), opts)
    backend_deallocate(t)
    result
  end

  @impl true
  def to_binary(%T{data: %__MODULE__{ref: nil}} = t, limit),
    do: Nx.BinaryBackend.to_binary(host_tensor(t), limit)

  def to_binary(%T{data: %__MODULE__{ref: ref}} = t, limit), do: native_binary(t, ref, limit)

  @impl true
  def to_batched(%T{} = out, %T{} = t, opts) do
    batch = elem(out.shape, 0)
    size = elem(t.shape, 0)
    full = div(size, batch)
    remainder = rem(size, batch)
    last = if remainder != 0 and opts[:leftover] == :repeat, do: full, else: full - 1

    # Slices of this backend: native, no host round trip.
    Stream.map(0..last//1, fn
      ^full ->
        head = Nx.slice_along_axis(t, full * batch, remainder, axis: 0)
        tail = Nx.slice_along_axis(t, 0, batch - remainder, axis: 0)
        %{Nx.concatenate([head, tail], axis: 0) | names: out.names}

      i ->
        %{Nx.slice_along_axis(t, i * batch, batch, axis: 0) | names: out.names}
    end)
  end

  @impl true
  def inspect(%T{data: %__MODULE__{device: device, ref: ref}} = t, opts) do
    limit = if opts.limit == :infinity, do: nil, else: min(opts.limit + 1, Nx.size(t))
    binary = if limit, do: to_binary(t, limit), else: binary!(t)
    doc = Nx.Backend.inspect(t, binary, opts)

    if Nx.Vulkan.inspect_backend?() do
      where = if ref, do: "device: #{device}", else: "device: #{device}, host-resident"
      Inspect.Algebra.concat(["Nx.Vulkan.Backend<#{where}>", Inspect.Algebra.line(), doc])
    else
      doc
    end
  end

  ## Pointers

  @doc """
  Shares a device tensor's memory through an `Nx.Pointer` (`Nx.to_pointer/2`).

  Options: `:mode`, `:local` (default) or `:ipc`.

    * `:ipc` - the tensor's memory exported as an opaque POSIX file descriptor
      (`VK_KHR_external_memory_fd`). `handle` is a string,
      `"nx_vulkan:fd:v1:pid=P:fd=N:dev=D:ino=I:buffer=B:alloc=A:type=T:dedicated=0|1:device=UUID:driver=UUID"`:
      the process and fd that hold the export, the file's identity, how the memory was
      allocated (an importer must repeat it) and the physical device and driver (opaque fds
      import only there). `address` is nil. The first export moves the tensor into a dedicated
      exportable buffer (one device copy; its value is unchanged); later exports of it return
      the same handle. The fd is owned by that buffer and stays open while the tensor, a tensor
      sharing its buffer, or the handle binary lives in this VM (the handle is a resource binary
      that holds the export; `:binary.copy/1` of it, or its bytes outside the VM, does not). When
      all are garbage (or deallocated) the memory is freed and the fd closed; an importer must
      have imported by then. An import holds its own reference to the memory and outlives the
      exporter.
    * `:local` - `address` is the host address of the tensor's memory, valid while the tensor
      lives. Only where tensors are host-visible (`unified_memory`, as on lavapipe and integrated
      GPUs, unless staging is forced); elsewhere (discrete GPUs) it raises `Nx.Vulkan.Error` with
      kind `:unsupported`, because Vulkan device memory has no address another library in the
      process could use. Writing through the address changes the tensor (and every tensor that
      shares its buffer), which Nx assumes immutable.

  `data_size` is the tensor's size in bytes. A device without the capability raises
  `Nx.Vulkan.Error` (kind `:unsupported`) with a message that starts
  "to_pointer: unsupported on this device".
  """
  @impl true
  def to_pointer(%T{data: %__MODULE__{ref: ref}} = t, opts) do
    opts =
      case Keyword.validate(opts, mode: :local) do
        {:ok, opts} ->
          opts

        {:error, keys} ->
          raise ArgumentError, "to_pointer: unknown options #{inspect(keys)} (valid: [:mode])"
      end

    mode = opts[:mode]

    unless mode in [:local, :ipc] do
      raise ArgumentError, "to_pointer: :mode must be :local or :ipc, got: #{inspect(mode)}"
    end

    if ref == nil do
      raise ArgumentError,
            "to_pointer: the #{Nx.Type.to_string(t.type)} tensor is held on the host " <>
              "(the device has no storage for its type), so it has no device memory to share"
    end

    case Native.to_pointer(ref, mode) do
      {:local, address, size} -> %Nx.Pointer{kind: :local, address: address, data_size: size}
      {:ipc, handle, size} -> %Nx.Pointer{kind: :ipc, handle: handle, data_size: size}
    end
  end

  @doc """
  A tensor over the memory an `Nx.Pointer` names (`Nx.from_pointer/5`), aliasing it: no copy.

  Backend options: `:device`. Options: `:names`. `data_size` must equal the bytes of `type` x
  `shape`.

    * `:ipc` - a handle made by `to_pointer/2` (`mode: :ipc`) on the same physical device and
      driver, in this OS process or another one. Another process's fd is duplicated with
      `pidfd_getfd` (Linux 5.6+), which needs ptrace permission over the exporter (same user,
      subject to Yama's `ptrace_scope`); otherwise pass the fd over a Unix socket
      (`SCM_RIGHTS`) and put the receiving process's pid and fd in the handle. The exporter must
      still hold the export (the tensor not freed); a closed fd, or its number reused by another
      file, is refused. The new tensor keeps the memory alive on its own.
    * `:local` - a host address (`VK_EXT_external_memory_host`), a multiple of the device's
      `min_imported_host_pointer_alignment` (4096 on lavapipe), whose range rounded up to that
      alignment is mapped and readable. The memory must outlive the tensor and not change while
      it lives: the tensor reads it in place.

  Malformed pointers raise `ArgumentError`; a device without the capability raises
  `Nx.Vulkan.Error` (kind `:unsupported`).
  """
  @impl true
  def from_pointer(pointer, type, shape, backend_opts, opts) do
    device = device_opt(backend_opts)

    opts =
      case Keyword.validate(opts, [:names]) do
        {:ok, opts} ->
          opts

        {:error, keys} ->
          raise ArgumentError, "from_pointer: unknown options #{inspect(keys)} (valid: [:names])"
      end

    {kind, target, size} =
      case pointer do
        %Nx.Pointer{kind: :local, address: a, data_size: n} when is_integer(a) and a >= 0 ->
          {:local, a, n}

        %Nx.Pointer{kind: :ipc, handle: h, data_size: n} when is_binary(h) ->
          {:ipc, h, n}

        %Nx.Pointer{kind: :local} ->
          raise ArgumentError,
                "from_pointer: a :local pointer needs a non-negative integer :address, got: " <>
                  inspect(pointer)

        %Nx.Pointer{kind: :ipc} ->
          raise ArgumentError,
                "from_pointer: an :ipc pointer needs a binary :handle, got: #{inspect(pointer)}"

        other ->
          raise ArgumentError,
                "from_pointer: expected an %Nx.Pointer{kind: :local | :ipc}, got: #{inspect(other)}"
      end

    unless is_integer(size) and size >= 0 do
      raise ArgumentError,
            "from_pointer: :data_size must be a non-negative integer, got: #{inspect(size)}"
    end

    out = Nx.template(shape, type, names: opts[:names])
    wrap(out, Native.from_pointer(device, type, shape, kind, target, size), device)
  end

  ## Casts and shape

  @impl true
  def as_type(out, t),
    do: run(:as_type, :as_type, [out, t], &wrap(out, Native.as_type(ref!(t, &1), out.type), &1))

  @impl true
  def bitcast(out, t),
    do: run(:bitcast, :bitcast, [out, t], &wrap(out, Native.bitcast(ref!(t, &1), out.type), &1))

  @impl true
  def reshape(out, t),
    do: run(:reshape, :reshape, [out, t], &wrap(out, Native.reshape(ref!(t, &1), out.shape), &1))

  @impl true
  def squeeze(out, t, axes),
    do: run(:squeeze, :squeeze, [out, t, axes], &wrap(out, Native.squeeze(ref!(t, &1), axes), &1))

  @impl true
  def broadcast(out, t, shape, axes) do
    run(
      :broadcast,
      :broadcast,
      [out, t, shape, axes],
      &wrap(out, Native.broadcast(ref!(t, &1), shape, axes), &1)
    )
  end

  @impl true
  def transpose(out, t, axes),
    do:
      run(
        :transpose,
        :transpose,
        [out, t, axes],
        &wrap(out, Native.transpose(ref!(t, &1), axes), &1)
      )

  @impl true
  def reverse(out, t, axes),
    do: run(:reverse, :reverse, [out, t, axes], &wrap(out, Native.reverse(ref!(t, &1), axes), &1))

  @impl true
  def pad(out, t, value, config) do
    run(:pad, :pad, [out, t, value, config], fn d ->
      wrap(out, Native.pad(ref!(t, d), ref!(value, d), config, out.type), d)
    end)
  end

  @impl true
  def slice(out, t, start, lengths, strides) do
    if Enum.all?(start, &is_integer/1) do
      run(:slice, :slice, [out, t, start, lengths, strides], fn d ->
        wrap(out, Native.slice(ref!(t, d), start, lengths, strides), d)
      end)
    else
      run(:slice, :slice_dynamic, [out, t, start, lengths, strides], fn d ->
        wrap(out, Native.slice_dynamic(ref!(t, d), index_refs(start, d), lengths, strides), d)
      end)
    end
  end

  @impl true
  def put_slice(out, t, start, update) do
    if Enum.all?(start, &is_integer/1) do
      run(:put_slice, :put_slice, [out, t, start, update], fn d ->
        wrap(out, Native.put_slice(ref!(t, d), start, ref!(update, d), out.type), d)
      end)
    else
      run(:put_slice, :put_slice_dynamic, [out, t, start, update], fn d ->
        wrap(
          out,
          Native.put_slice_dynamic(ref!(t, d), index_refs(start, d), ref!(update, d), out.type),
          d
        )
      end)
    end
  end

  @impl true
  def concatenate(out, tensors, axis) do
    run(:concatenate, :concatenate, [out, tensors, axis], fn d ->
      wrap(out, Native.concatenate(Enum.map(tensors, &ref!(&1, d)), axis, out.type), d)
    end)
  end

  @impl true
  def stack(out, tensors, axis) do
    run(:stack, :stack, [out, tensors, axis], fn d ->
      wrap(out, Native.stack(Enum.map(tensors, &ref!(&1, d)), axis, out.type), d)
    end)
  end

  ## Elementwise

  @impl true
  def select(out, pred, on_true, on_false) do
    run(:select, :select, [out, pred, on_true, on_false], fn d ->
      wrap(
        out,
        Native.select(ref!(pred, d), ref!(on_true, d), ref!(on_false, d), out.type, out.shape),
        d
      )
    end)
  end

  @impl true
  def clip(out, t, min, max) do
    run(:clip, :clip, [out, t, min, max], fn d ->
      wrap(out, Native.clip(ref!(t, d), ref!(min, d), ref!(max, d), out.type), d)
    end)
  end

  unary_ops =
    Enum.map(Nx.Shared.unary_math_funs(), &elem(&1, 0)) ++
      [:abs, :bitwise_not, :ceil, :conjugate, :floor, :negate, :round, :sign] ++
      [:count_leading_zeros, :population_count, :real, :imag, :is_nan, :is_infinity]

  for op <- unary_ops do
    @impl true
    def unquote(op)(out, t) do
      run(
        unquote(op),
        :unary,
        [out, t],
        &wrap(out, Native.unary(unquote(op), ref!(t, &1), out.type), &1)
      )
    end
  end

  binary_ops =
    [:add, :subtract, :multiply, :pow, :remainder, :divide, :atan2, :min, :max, :quotient] ++
      [:bitwise_and, :bitwise_or, :bitwise_xor, :left_shift, :right_shift] ++
      [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] ++
      [:logical_and, :logical_or, :logical_xor]

  for op <- binary_ops do
    @impl true
    def unquote(op)(out, a, b) do
      run(unquote(op), :binary, [out, a, b], fn d ->
        wrap(out, Native.binary(unquote(op), ref!(a, d), ref!(b, d), out.type, out.shape), d)
      end)
    end
  end

  ## Reductions

  for op <- [:sum, :product, :reduce_max, :reduce_min, :all, :any] do
    @impl true
    def unquote(op)(out, t, opts) do
      axes = opts[:axes] || Nx.axes(t)
      keep = opts[:keep_axes] || false

      run(unquote(op), :reduce, [out, t, opts], fn d ->
        wrap(out, Native.reduce(unquote(op), ref!(t, d), axes, keep, out.type), d)
      end)
    end
  end

  for op <- [:argmax, :argmin] do
    @impl true
    def unquote(op)(out, t, opts) do
      keep = opts[:keep_axis] || false
      tie_break = opts[:tie_break] || :low

      run(unquote(op), :arg_reduce, [out, t, opts], fn d ->
        wrap(
          out,
          Native.arg_reduce(unquote(op), ref!(t, d), opts[:axis], keep, tie_break, out.type),
          d
        )
      end)
    end
  end

  ## Not built yet: these run on the host (counted, refused in strict mode).

  host_only = [
    dot: 7,
    conv: 4,
    gather: 4,
    indexed_add: 5,
    indexed_put: 5,
    reduce: 5,
    window_reduce: 6,
    window_sum: 4,
    window_product: 4,
    window_max: 4,
    window_min: 4,
    window_scatter_max: 6,
    window_scatter_min: 6,
    sort: 3,
    argsort: 3,
    triangular_solve: 4,
    fft: 3,
    ifft: 3
  ]

  for {op, arity} <- host_only do
    args = Macro.generate_arguments(arity, __MODULE__)

    @impl true
    def unquote(op)(unquote_splicing(args)) do
      host(unquote(op), unquote(args), unquote("not built yet: #{op}"))
    end
  end

  @doc false
  def host_only_callbacks, do: unquote(host_only)

  ## Blocks

  @cumulative %{
    Nx.Block.CumulativeSum => :cumulative_sum,
    Nx.Block.CumulativeProduct => :cumulative_product,
    Nx.Block.CumulativeMin => :cumulative_min,
    Nx.Block.CumulativeMax => :cumulative_max
  }

  # Cumulative blocks run as one native op when the op library has it; every other block runs
  # its default implementation, which is made of Nx ops that run on the device one by one.
  @impl true
  def block(
        %mod{axis: axis, reverse: reverse} = struct,
        %T{} = out,
        [%T{data: %__MODULE__{ref: ref}} = t],
        fun
      )
      when is_map_key(@cumulative, mod) and not is_nil(ref) do
    if MapSet.member?(Nx.Vulkan.native_functions(), :cumulative) do
      d = t.data.device

      try do
        wrap(out, Native.cumulative(Map.fetch!(@cumulative, mod), ref, axis, reverse, out.type), d)
      rescue
        e in Nx.Vulkan.Error ->
          if e.kind in [:unsupported, :not_built],
            do: fun.(struct, t),
            else: reraise(e, __STACKTRACE__)
      end
    else
      fun.(struct, t)
    end
  end

  def block(struct, _out, args, fun), do: apply(fun, [struct | args])

  ## Dispatch

  # Runs `native` (given the device index) unless its NIF function is not built or an argument
  # is held on the host; those, and ops the library reports :unsupported or :not_built, run on
  # the host through Nx.BinaryBackend.
  defp run(op, function, args, device \\ nil, native) do
    device = device || find_device(args)

    cond do
      not MapSet.member?(Nx.Vulkan.native_functions(), function) ->
        host(op, args, "no native #{function} yet", device)

      host_resident?(args) ->
        host(op, args, "an argument's type is held on the host", device)

      true ->
        try do
          native.(device)
        rescue
          e in Nx.Vulkan.Error ->
            if e.kind in [:unsupported, :not_built],
              do: host(op, args, e.message, device),
              else: reraise(e, __STACKTRACE__)
        end
    end
  end

  defp host(op, args, reason, device \\ nil) do
    Fallback.record!(op, reason)
    device = device || find_device(args)
    host_args = Enum.map(args, &to_host/1)
    # Nx.BinaryBackend builds helper tensors with the default backend: make that itself.
    result =
      Nx.with_default_backend(Nx.BinaryBackend, fn -> apply(Nx.BinaryBackend, op, host_args) end)

    from_host(result, device)
  end

  defp to_host(%T{data: %__MODULE__{}} = t), do: host_tensor(t)
  defp to_host(list) when is_list(list), do: Enum.map(list, &to_host/1)
  defp to_host(other), do: other

  defp from_host(%T{data: %Nx.BinaryBackend{state: bin}} = t, device),
    do: upload(t, bin, device, nil)

  defp from_host(%T{} = t, device), do: upload(t, Nx.to_binary(t), device, nil)

  defp from_host(tuple, device) when is_tuple(tuple),
    do: tuple |> Tuple.to_list() |> Enum.map(&from_host(&1, device)) |> List.to_tuple()

  defp from_host(list, device) when is_list(list), do: Enum.map(list, &from_host(&1, device))
  defp from_host(other, _device), do: other

  # Puts bytes on the device; a type this device cannot hold (f64 without shaderFloat64, ...)
  # stays on the host in this backend (a host fallback of `count_as` when given). Every Nx type
  # has a row in the native type table; a bitstring of a sub-byte type (u2, u4, s2, s4) is padded
  # with zero bits to whole bytes, as the native side stores it.
  defp upload(%T{type: type, shape: shape} = out, bits, device, count_as) do
    try do
      wrap(out, Native.from_binary(device, type, shape, pad_to_bytes(bits)), device)
    rescue
      e in Nx.Vulkan.Error ->
        if e.kind == :unsupported,
          do: host_resident(out, bits, device, count_as, e.message),
          else: reraise(e, __STACKTRACE__)
    end
  end

  defp pad_to_bytes(bits) when is_binary(bits), do: bits
  defp pad_to_bytes(bits), do: <<bits::bitstring, 0::size(8 - rem(bit_size(bits), 8))>>

  # The native side returns whole bytes; Nx's binary of a sub-byte type is a bitstring.
  defp native_binary(%T{type: {_, size}} = t, ref, limit) do
    bytes = Native.to_binary(ref, limit)

    case rem(size, 8) do
      0 ->
        bytes

      _ ->
        bits = min(limit || Nx.size(t), Nx.size(t)) * size
        <<bitstring::bitstring-size(bits), _::bitstring>> = bytes
        bitstring
    end
  end

  defp host_resident(out, binary, device, count_as, reason) do
    if count_as, do: Fallback.record!(count_as, reason)
    %{out | data: %__MODULE__{ref: nil, device: device, host: %Nx.BinaryBackend{state: binary}}}
  end

  defp wrap(%T{} = out, ref, device), do: %{out | data: %__MODULE__{ref: ref, device: device}}

  # The NIF reference of an argument; a tensor of another backend is uploaded to `device` first.
  defp ref!(%T{data: %__MODULE__{ref: ref}}, _device) when ref != nil, do: ref

  defp ref!(%T{} = t, device) do
    %T{data: %__MODULE__{ref: ref}} = upload(t, Nx.to_binary(t), device, nil)

    ref ||
      raise Nx.Vulkan.Error,
        kind: :unsupported,
        message: "#{Nx.Type.to_string(t.type)} is held on the host"
  end

  defp index_refs(start, device) do
    Enum.map(start, fn
      i when is_integer(i) -> Native.from_binary(device, {:s, 64}, {}, <<i::64-signed-native>>)
      %T{} = t -> ref!(t, device)
    end)
  end

  defp copy_to_device(%T{data: %__MODULE__{ref: nil}} = t, device),
    do: %{t | data: %{t.data | device: device}}

  defp copy_to_device(%T{data: %__MODULE__{ref: ref, device: device}} = t, device) do
    # Same device: a new resource sharing the (immutable) buffer, so either can be deallocated.
    if MapSet.member?(Nx.Vulkan.native_functions(), :reshape),
      do: wrap(t, Native.reshape(ref, t.shape), device),
      else: upload(t, binary!(t), device, nil)
  end

  defp copy_to_device(%T{} = t, device), do: upload(t, binary!(t), device, nil)

  defp binary!(%T{data: %__MODULE__{ref: nil, host: host}}), do: host.state
  defp binary!(%T{data: %__MODULE__{ref: ref}} = t), do: native_binary(t, ref, nil)
  defp binary!(%T{} = t), do: Nx.to_binary(t)

  defp host_tensor(%T{data: %__MODULE__{ref: nil, host: host}} = t), do: %{t | data: host}

  defp host_tensor(%T{data: %__MODULE__{ref: ref}} = t),
    do: %{t | data: %Nx.BinaryBackend{state: native_binary(t, ref, nil)}}

  defp host_resident?(args) do
    Enum.any?(args, fn
      %T{data: %__MODULE__{ref: nil}} -> true
      list when is_list(list) -> host_resident?(list)
      _ -> false
    end)
  end

  defp find_device(args) do
    Enum.find_value(args, fn
      %T{data: %__MODULE__{device: d}} -> d
      list when is_list(list) -> find_device(list)
      _ -> nil
    end) || Nx.Vulkan.default_device()
  end

  # Options reach some callbacks without init/1 (Nx.tensor transfers from Nx.BinaryBackend).
  defp device_opt([]), do: Nx.Vulkan.default_device()
  defp device_opt(opts) when is_list(opts), do: init(opts)[:device] || Nx.Vulkan.default_device()

  defp scalar(%Complex{re: re, im: im}), do: {re, im}
  defp scalar(value), do: value
end
