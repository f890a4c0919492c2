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

  # With host fallbacks allowed, every doctest of Nx runs here.
  doctest Nx
end

defmodule Nx.Vulkan.StrictDoctestTest do
  @moduledoc """
  Nx's doctests again with host fallbacks refused (`host_fallback: :raise`): every doctest here
  runs entirely on the device. Excluded are the functions whose doctests need an op that has no
  native kernel yet, each with its reason.
  """
  use ExUnit.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    Nx.Vulkan.inspect_backend(false)
    Nx.Vulkan.Fallback.put_mode(:raise)
    :ok
  end

  # Each entry: a function whose doctests need an op with no native kernel yet.
  @not_built [
    # not built yet: indexing (gather): two examples of the module doc index with a list
    # (tensor[[0, 1]]); ExUnit can exclude the module doc's examples only all together
    :moduledoc,
    # not built yet: dot
    dot: 2,
    dot: 4,
    dot: 6,
    covariance: 3,
    # not built yet: conv
    conv: 3,
    # not built yet: windows (window_sum/product/max/min, window_reduce, window_scatter_*)
    window_sum: 3,
    window_mean: 3,
    window_product: 3,
    window_max: 3,
    window_min: 3,
    window_reduce: 5,
    window_scatter_max: 5,
    window_scatter_min: 5,
    # not built yet: indexing (gather, indexed_add, indexed_put)
    gather: 3,
    take: 3,
    take_diagonal: 2,
    indexed_add: 4,
    indexed_put: 4,
    make_diagonal: 2,
    put_diagonal: 3,
    # not built yet: indexing (gather): its doctests slice with tensor indices / reflect-pad
    slice: 4,
    pad_outer: 3,
    reflect: 2,
    # not built yet: sorting (sort, argsort)
    sort: 2,
    argsort: 2,
    top_k: 2,
    median: 2,
    mode: 2,
    take_along_axis: 3,
    # not built yet: FFT
    fft: 2,
    ifft: 2,
    fft2: 2,
    ifft2: 2,
    rfft: 2,
    irfft: 2,
    # not built yet: reduce with an Elixir function
    reduce: 4,
    # not built yet: complex types (c64/c128 kernels) in some of their doctests
    complex: 2,
    conjugate: 1,
    real: 1,
    imag: 1,
    phase: 1,
    as_type: 2,
    is_nan: 1,
    is_infinity: 1
  ]
  doctest Nx, except: @not_built
end
