defmodule Nx.Vulkan do
  @moduledoc """
  Nx on Vulkan: a tensor backend whose work runs on any Vulkan 1.2+ compute device.

      Nx.default_backend(Nx.Vulkan.Backend)
      Nx.sigmoid(Nx.tensor([1.0, 2.0, 3.0, 4.0]))

  Pick a device per tensor with `backend: {Nx.Vulkan.Backend, device: 1}` (an index from
  `devices/0`), or for the whole VM with `NX_VULKAN_DEVICE` (an index or a name substring).
  `Nx.Vulkan.VulkanoBackend` is the same backend under the name the original nx_vulkan used.

  Operations the device cannot run yet fall back to the host, counted and refusable: see
  `Nx.Vulkan.Fallback` and `strict/1`.
  """
  alias Nx.Vulkan.Native

  @doc """
  The Vulkan devices, each a map with `:index`, `:name`, `:type` (`:discrete`, `:integrated`,
  `:virtual`, `:cpu` or `:other`), driver details and `:capabilities` (types such as
  `:float64`/`:int64`, subgroup size, memory limits, `:unified_memory`, `:external_memory_fd`
  and `:external_memory_host` for `Nx.to_pointer/2` and `Nx.from_pointer/5`, ...).

  Raises `Nx.Vulkan.Error` (kind `:no_device`) saying what to install when there is no Vulkan
  driver or device.
  """
  def devices, do: Native.devices()

  @doc "The index of the device used when none is given (cached after the first call)."
  def default_device do
    case :persistent_term.get({__MODULE__, :default_device}, nil) do
      nil ->
        index = Native.default_device()
        :persistent_term.put({__MODULE__, :default_device}, index)
        index

      index ->
        index
    end
  end

  @doc """
  Memory statistics of the default device: bytes and buffers in use and cached, the peak,
  allocation counts, and the constant tables the device keeps for its kernels
  (`:constant_buffers`, `:constant_bytes`: uploaded once, not counted as live buffers). See
  `memory_stats/1`.
  """
  def memory_stats, do: memory_stats(default_device())

  @doc "Memory statistics of device `index` (see `memory_stats/0`)."
  def memory_stats(index), do: Native.memory_stats(index)

  @doc "Gives the memory cached for reuse on device `index` (default device) back to the driver."
  def release_cached_memory(index \\ nil),
    do: Native.release_cached_memory(index || default_device())

  @doc """
  Submits all recorded work on device `index` (default device) and waits for it. Results are
  always complete when read; this is for benchmarks that time the device work itself.
  """
  def flush(index \\ nil), do: Native.sync(index || default_device())

  @doc """
  Turns strict mode on (`true`: host fallbacks raise `Nx.Vulkan.HostFallbackError`) or off
  (`false`: they are allowed) for the whole VM, by setting the `:host_fallback` application
  key. Use `Nx.Vulkan.Fallback.strict/1` to scope it to one process and one function.
  """
  def strict(true), do: Application.put_env(:nx_vulkan, :host_fallback, :raise)
  def strict(false), do: Application.put_env(:nx_vulkan, :host_fallback, :allow)

  @doc "Whether host fallbacks raise in the calling process (see `strict/1`)."
  def strict?, do: Nx.Vulkan.Fallback.mode() == :raise

  @doc "The number of host fallbacks since start, all processes (see `Nx.Vulkan.Fallback`)."
  def fallback_count, do: Nx.Vulkan.Fallback.total()

  @doc """
  Validation-layer report: `%{enabled: boolean, messages: count, last_message: string}`. The
  layer is on when `NX_VULKAN_VALIDATION=1` is set before the first device use; the test suite
  fails on any message.
  """
  def validation_report, do: Native.validation_report()

  @doc """
  Sets the f32 math mode for the whole VM: `:exact` (the default: f32 math results are the
  correctly rounded ones, Nx.BinaryBackend's bits) or `:fast` (the functions the README's
  `NX_VULKAN_F32_MATH` row lists, sigmoid and tanh among them, run in f32 arithmetic within 1 ulp
  of those results; faster where the GPU's f64 is slow).
  It overrides the `NX_VULKAN_F32_MATH` environment variable the VM was started with
  (`System.put_env/2` does not reach the native library: Erlang keeps its own copy of the
  environment). Applies to the ops issued after it.
  """
  def set_f32_math(mode) when mode in [:exact, :fast], do: Native.set_f32_math(mode)

  def set_f32_math(mode),
    do:
      raise(
        ArgumentError,
        "Nx.Vulkan.set_f32_math: the mode must be :exact or :fast, got #{inspect(mode)}"
      )

  @doc """
  Whether `inspect/2` of a tensor shows the backend and device line
  (`Nx.Vulkan.Backend<device: 0>`). On by default (application key `:inspect_backend`);
  `inspect_backend(false)` turns it off for the calling process only, as the doctests need
  output identical to `Nx.BinaryBackend`'s.
  """
  def inspect_backend(show?) when is_boolean(show?) do
    Process.put({__MODULE__, :inspect_backend}, show?)
    :ok
  end

  @doc "Whether the backend line is shown by inspect in the calling process (see `inspect_backend/1`)."
  def inspect_backend? do
    case Process.get({__MODULE__, :inspect_backend}) do
      nil -> Application.get_env(:nx_vulkan, :inspect_backend, true)
      show? -> show?
    end
  end

  @doc "The op-library functions present in the loaded NIF (the rest run on the host)."
  def native_functions do
    case :persistent_term.get({__MODULE__, :native_functions}, nil) do
      nil ->
        set = MapSet.new(Native.built_functions())
        :persistent_term.put({__MODULE__, :native_functions}, set)
        set

      set ->
        set
    end
  end
end
