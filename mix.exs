defmodule Mix.Tasks.Compile.NxVulkan do
  @moduledoc """
  Builds the native core and the NIF with CMake and Ninja, and copies the NIF into `priv/`.

  Defined in `mix.exs` (not under `lib/`) because Mix runs this compiler before it compiles
  `lib/`: a compiler that lives in `lib/` would not exist yet on a fresh checkout.

  Environment:

    * `NX_VULKAN_BUILD_DIR` - the CMake build directory (default `_build/native`)
    * `NX_VULKAN_JOBS` - parallel jobs for Ninja (default: Ninja's own choice)
    * `NX_VULKAN_CMAKE_ARGS` - extra arguments for the CMake configure step
  """
  use Mix.Task.Compiler

  @nif "libnx_vulkan_nif.so"

  @doc "Configures (once), builds (Ninja decides what is stale) and installs the NIF."
  @impl true
  def run(_args) do
    root = Path.expand(".", __DIR__)
    build = System.get_env("NX_VULKAN_BUILD_DIR") || Path.join(root, "_build/native")
    built = Path.join([build, "nif", @nif])
    installed = Path.join([root, "priv", @nif])

    unless File.exists?(Path.join(build, "build.ninja")), do: configure(root, build)
    unless System.find_executable("ninja"), do: cmd!("ninja", [])

    jobs = System.get_env("NX_VULKAN_JOBS")
    args = ["-C", build] ++ if(jobs, do: ["-j", jobs], else: []) ++ ["nxvk_nif"]
    {out, status} = System.cmd("ninja", args, stderr_to_stdout: true)

    if status != 0 do
      Mix.shell().error(out)
      Mix.raise("nx_vulkan: building the native core failed (ninja #{Enum.join(args, " ")})")
    end

    # Ninja decides what to rebuild; install when priv/ lacks the NIF or has an older one.
    if String.contains?(out, "no work to do") and current?(installed, built) do
      {:noop, []}
    else
      Mix.shell().info("Compiled nx_vulkan native core and NIF (#{build})")
      File.mkdir_p!(Path.dirname(installed))
      # Copy to a temporary name and rename: a loaded NIF must never be overwritten in place.
      tmp = installed <> ".tmp"
      File.cp!(built, tmp)
      File.rename!(tmp, installed)
      # Mix links priv/ into _build before compilers run; on a fresh clone priv/ did not exist then.
      unless File.exists?(Path.join(Mix.Project.app_path(), "priv")),
        do: Mix.Project.build_structure()

      {:ok, []}
    end
  end

  defp current?(installed, built) do
    case {File.stat(installed, time: :posix), File.stat(built, time: :posix)} do
      {{:ok, i}, {:ok, b}} -> i.mtime >= b.mtime and i.size == b.size
      _ -> false
    end
  end

  defp configure(root, build) do
    extra = OptionParser.split(System.get_env("NX_VULKAN_CMAKE_ARGS") || "")

    cmd!(
      "cmake",
      ["-S", Path.join(root, "native"), "-B", build, "-G", "Ninja"] ++
        ["-DNXVK_NIF=ON", "-DNXVK_TESTS=OFF", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"] ++ extra
    )
  end

  defp cmd!(exe, args) do
    unless System.find_executable(exe) do
      Mix.raise(
        "nx_vulkan needs #{exe} to build its native core (apt-get install cmake ninja-build)"
      )
    end

    case System.cmd(exe, args, into: IO.stream(:stdio, :line), stderr_to_stdout: true) do
      {_, 0} ->
        :ok

      {_, status} ->
        Mix.raise("nx_vulkan: `#{exe} #{Enum.join(args, " ")}` failed (exit #{status})")
    end
  end
end

defmodule NxVulkan.MixProject do
  use Mix.Project

  @version "0.1.0"

  def project do
    [
      app: :nx_vulkan,
      version: @version,
      elixir: "~> 1.17",
      start_permanent: Mix.env() == :prod,
      compilers: [:nx_vulkan | Mix.compilers()],
      deps: deps(),
      description: "A Vulkan compute backend for Nx",
      package: [files: ~w(lib native/CMakeLists.txt native/cmake native/include native/kernels
                         native/nif native/src native/tools mix.exs README.md)],
      test_coverage: [ignore_modules: [Mix.Tasks.Compile.NxVulkan]]
    ]
  end

  def application do
    [extra_applications: [:logger], mod: {Nx.Vulkan.Application, []}]
  end

  # Users get Nx from Hex. For local work against an Nx source checkout set NX_VULKAN_NX_PATH
  # (and NX_VULKAN_COMPLEX_PATH / NX_VULKAN_TELEMETRY_PATH for its dependencies, which then
  # override the versions Nx asks for). Off unless the variables are set.
  defp deps do
    [
      dep(:nx, "~> 0.13", "NX_VULKAN_NX_PATH", []),
      dep(:telemetry, "~> 0.4.0 or ~> 1.0", "NX_VULKAN_TELEMETRY_PATH", override: true)
    ] ++
      case System.get_env("NX_VULKAN_COMPLEX_PATH") do
        nil -> []
        path -> [{:complex, path: path, override: true}]
      end
  end

  defp dep(name, requirement, env, path_opts) do
    case System.get_env(env) do
      nil -> {name, requirement}
      path -> {name, [path: path] ++ path_opts}
    end
  end
end
