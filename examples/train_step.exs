# One MLP training step, repeated: forward pass, gradients with Nx.Defn.grad under the default
# evaluator (Nx.Defn.Evaluator), SGD update; every op on Nx.Vulkan.Backend.
#
#   mix run examples/train_step.exs
#
# dot has no native kernel yet (a later issue), so it is a host fallback; the count is printed.
Nx.default_backend(Nx.Vulkan.Backend)

defmodule MLP do
  import Nx.Defn

  defn predict({w1, b1, w2, b2}, x) do
    x
    |> Nx.dot(w1)
    |> Nx.add(b1)
    |> Nx.sigmoid()
    |> Nx.dot(w2)
    |> Nx.add(b2)
    |> softmax()
  end

  defn softmax(logits) do
    max = Nx.reduce_max(logits, axes: [-1], keep_axes: true)
    exp = Nx.exp(logits - max)
    exp / Nx.sum(exp, axes: [-1], keep_axes: true)
  end

  defn loss(params, x, y) do
    probs = predict(params, x)
    -Nx.mean(Nx.sum(y * Nx.log(probs), axes: [-1]))
  end

  defn update(params, x, y, lr) do
    {loss, grads} = value_and_grad(params, &loss(&1, x, y))
    {w1, b1, w2, b2} = params
    {gw1, gb1, gw2, gb2} = grads
    {{w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2}, loss}
  end
end

{batch, inputs, hidden, classes} = {32, 64, 32, 10}
key = Nx.Random.key(42)
{x, key} = Nx.Random.normal(key, shape: {batch, inputs})
{labels, key} = Nx.Random.randint(key, 0, classes, shape: {batch})
y = Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, classes})) |> Nx.as_type(:f32)
{w1, key} = Nx.Random.normal(key, 0.0, 0.1, shape: {inputs, hidden})
{w2, _key} = Nx.Random.normal(key, 0.0, 0.1, shape: {hidden, classes})
params = {w1, Nx.broadcast(0.0, {hidden}), w2, Nx.broadcast(0.0, {classes})}

{{_params, losses}, fallbacks} =
  Nx.Vulkan.Fallback.count(fn ->
    Enum.map_reduce(1..5, params, fn step, params ->
      {time, {params, loss}} = :timer.tc(fn -> MLP.update(params, x, y, 0.5) end)
      loss = Nx.to_number(loss)
      IO.puts("step #{step}: loss #{Float.round(loss, 5)} (#{div(time, 1000)} ms)")
      {loss, params}
    end)
    |> then(fn {losses, params} -> {params, losses} end)
  end)

if List.last(losses) >= hd(losses), do: raise("the loss did not go down: #{inspect(losses)}")
IO.puts("host fallbacks in 5 steps: #{inspect(fallbacks)} (dot has no native kernel yet)")
