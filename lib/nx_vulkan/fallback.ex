defmodule Nx.Vulkan.Fallback do
  @moduledoc """
  Host fallbacks: what happens to an operation the Vulkan device cannot run, and how to see it.

  An operation with no native implementation yet (or a type the device cannot hold) runs on
  `Nx.BinaryBackend`: its arguments are copied to the host, the BinaryBackend computes, and the
  result is copied back to the device. The result is right (it *is* the reference), so no value
  assertion can tell that the op left the device; this module makes it visible:

    * every fallback is counted (`stats/0`, `total/0`, and per scope with `count/1`,
      `count_total/1`) and emitted as the `:telemetry` event `[:nx_vulkan, :host_fallback]`
      with measurements `%{count: 1}` and metadata `%{op: atom, reason: string}`;
    * the mode says what a fallback may do: `:allow` (the default), `:warn` (log a warning)
      or `:raise` (refuse with `Nx.Vulkan.HostFallbackError` naming the op).

  The mode comes from `config :nx_vulkan, host_fallback: :allow | :warn | :raise` (or
  `Nx.Vulkan.strict/1`) and can be overridden for one process and one function with
  `strict/1` and `strict/2`, so one strict test does not change an `async: true` suite.

  An `Nx.Block` whose default implementation the backend runs is not a fallback: the default is
  written in Nx operations, which run on the device one by one.
  """
  require Logger

  @modes [:allow, :warn, :raise]
  @mode_key {__MODULE__, :mode}
  @scopes_key {__MODULE__, :scopes}
  @table :nx_vulkan_fallbacks
  @event [:nx_vulkan, :host_fallback]

  @doc "The telemetry event emitted for each host fallback."
  def event, do: @event

  @doc """
  The mode in effect for the calling process: its `strict/2` override, else the application
  setting `:host_fallback` (default `:allow`).
  """
  def mode do
    case Process.get(@mode_key) do
      nil -> validate_mode!(Application.get_env(:nx_vulkan, :host_fallback, :allow))
      mode -> mode
    end
  end

  @doc "Runs `fun` with host fallbacks refused (mode `:raise`) in this process only."
  def strict(fun) when is_function(fun, 0), do: strict(:raise, fun)

  @doc """
  Runs `fun` with the given mode (`:allow`, `:warn` or `:raise`) in this process only, and
  restores the previous mode afterwards (also when `fun` raises).
  """
  def strict(mode, fun) when is_function(fun, 0) do
    validate_mode!(mode)
    previous = Process.put(@mode_key, mode)

    try do
      fun.()
    after
      if previous, do: Process.put(@mode_key, previous), else: Process.delete(@mode_key)
    end
  end

  @doc """
  Sets the mode for the calling process until changed again (`nil` goes back to the application
  setting) and returns the previous override. Prefer the scoped `strict/2`; this is for test
  `setup` blocks, where the process ends with the test.
  """
  def put_mode(nil), do: Process.delete(@mode_key)
  def put_mode(mode), do: Process.put(@mode_key, validate_mode!(mode))

  @doc """
  Runs `fun` and returns `{result, counts}` where `counts` maps each op that fell back to the
  host in this process during `fun` to how often it did (`%{}` when everything ran on the device).
  """
  def count(fun) when is_function(fun, 0) do
    ref = make_ref()
    Process.put(@scopes_key, [ref | Process.get(@scopes_key, [])])
    Process.put({__MODULE__, ref}, %{})

    try do
      result = fun.()
      {result, Process.get({__MODULE__, ref})}
    after
      Process.put(@scopes_key, List.delete(Process.get(@scopes_key, []), ref))
      Process.delete({__MODULE__, ref})
    end
  end

  @doc "Runs `fun` and returns how many host fallbacks it made in this process."
  def count_total(fun) when is_function(fun, 0) do
    {_result, counts} = count(fun)
    counts |> Map.values() |> Enum.sum()
  end

  @doc "Host fallbacks since start (or `reset/0`), all processes, by op."
  def stats do
    if :ets.whereis(@table) == :undefined, do: %{}, else: Map.new(:ets.tab2list(@table))
  end

  @doc "The number of host fallbacks since start (or `reset/0`), all processes."
  def total, do: stats() |> Map.values() |> Enum.sum()

  @doc "Sets the global counters back to zero."
  def reset do
    if :ets.whereis(@table) != :undefined, do: :ets.delete_all_objects(@table)
    :ok
  end

  @doc false
  def table, do: @table

  @doc false
  # Called by the backend before it runs `op` on the host: refuses, warns or just counts.
  def record!(op, reason) do
    case mode() do
      :raise ->
        raise Nx.Vulkan.HostFallbackError, op: op, reason: reason

      :warn ->
        Logger.warning("Nx.Vulkan: #{op} runs on the host (#{reason})")

      :allow ->
        :ok
    end

    if :ets.whereis(@table) != :undefined, do: :ets.update_counter(@table, op, 1, {op, 0})

    for ref <- Process.get(@scopes_key, []) do
      Process.put(
        {__MODULE__, ref},
        Map.update(Process.get({__MODULE__, ref}, %{}), op, 1, &(&1 + 1))
      )
    end

    :telemetry.execute(@event, %{count: 1}, %{op: op, reason: reason})
    :ok
  end

  defp validate_mode!(mode) when mode in @modes, do: mode

  defp validate_mode!(mode) do
    raise ArgumentError,
          "host_fallback mode must be one of #{inspect(@modes)}, got: #{inspect(mode)}"
  end
end
