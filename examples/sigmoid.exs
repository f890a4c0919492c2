# The README example: run with `mix run examples/sigmoid.exs`.
Nx.default_backend(Nx.Vulkan.Backend)

[device | _] = Enum.filter(Nx.Vulkan.devices(), &(&1.index == Nx.Vulkan.default_device()))
IO.puts("device #{device.index}: #{device.name} (#{device.type})")

Nx.sigmoid(Nx.tensor([1.0, 2.0, 3.0, 4.0]))
|> IO.inspect()

IO.puts("host fallbacks: #{Nx.Vulkan.fallback_count()}")
