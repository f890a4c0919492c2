defmodule Nx.Vulkan.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    # The global host-fallback counters (Nx.Vulkan.Fallback.stats/0), owned by this supervisor.
    :ets.new(Nx.Vulkan.Fallback.table(), [:named_table, :public, write_concurrency: true])
    Supervisor.start_link([], strategy: :one_for_one, name: Nx.Vulkan.Supervisor)
  end
end
