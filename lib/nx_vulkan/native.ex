defmodule Nx.Vulkan.Native do
  @moduledoc """
  The NIF (`native/nif/`): thin term conversion over the C++ op library.

  Every function validates its arguments. A malformed argument raises `ArgumentError` naming
  the function and the argument; a device limitation raises `Nx.Vulkan.Error` (kind
  `:unsupported`, `:out_of_device_memory`, `:no_device`, ...); an op the C++ library does not
  have yet raises `Nx.Vulkan.Error` with kind `:not_built`. Functions that touch the device run
  on dirty CPU schedulers.

  Tensors are NIF resources: reference counted, freed when garbage collected or at once by
  `deallocate/1`. Types are Nx types (`{:f, 32}`), shapes are tuples, devices are indices (or
  `nil` for the default device).

  This module is internal: use `Nx.Vulkan` and `Nx.Vulkan.Backend`.
  """
  @on_load :load_nif

  # {name, arity} of every NIF, in the order of native/nif/nif_list.hpp.
  @functions [
    built_functions: 0,
    devices: 0,
    default_device: 0,
    memory_stats: 1,
    release_cached_memory: 1,
    sync: 1,
    validation_report: 0,
    set_f32_math: 1,
    tensor_info: 1,
    deallocate: 1,
    from_binary: 4,
    to_binary: 2,
    constant: 4,
    iota: 4,
    eye: 3,
    as_type: 2,
    bitcast: 2,
    unary: 3,
    binary: 5,
    select: 5,
    clip: 4,
    reshape: 2,
    squeeze: 2,
    broadcast: 3,
    transpose: 2,
    pad: 4,
    reverse: 2,
    slice: 4,
    slice_dynamic: 4,
    put_slice: 4,
    put_slice_dynamic: 4,
    concatenate: 3,
    stack: 3,
    reduce: 5,
    arg_reduce: 6,
    cumulative: 5,
    to_pointer: 2,
    from_pointer: 6
  ]

  @doc "The `{name, arity}` of every NIF function (used by the fuzz test)."
  def functions, do: @functions

  @doc false
  def load_nif do
    path = :filename.join(:code.priv_dir(:nx_vulkan), ~c"libnx_vulkan_nif")

    # A failed load leaves the stubs below in place, and they raise with the reason: the module
    # still loads, so the error surfaces at first use with a message instead of as a missing module.
    # `config :nx_vulkan, validation: true` turns the Vulkan validation layer on (as
    # NX_VULKAN_VALIDATION=1 does); the test configuration sets it.
    validation = if Application.get_env(:nx_vulkan, :validation, false), do: 1, else: 0

    case :erlang.load_nif(path, validation) do
      :ok -> :ok
      {:error, {:reload, _}} -> :ok
      {:error, reason} -> :persistent_term.put({__MODULE__, :load_error}, {path, reason})
    end

    :ok
  end

  @doc false
  def not_loaded(name) do
    {path, reason} = :persistent_term.get({__MODULE__, :load_error}, {"priv", :unknown})

    raise Nx.Vulkan.Error,
      kind: :nif_not_loaded,
      message:
        "#{name}: the nx_vulkan NIF is not loaded (#{path}.so: #{inspect(reason)}); " <>
          "run `mix compile` to build it"
  end

  for {name, arity} <- @functions do
    args = Macro.generate_arguments(arity, __MODULE__)

    @doc false
    def unquote(name)(unquote_splicing(args)) do
      _ = {unquote_splicing(args)}
      # apply/3: the type checker must not conclude that these always raise.
      apply(__MODULE__, :not_loaded, [unquote(name)])
    end
  end
end
