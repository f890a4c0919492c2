# The suite runs under the Vulkan validation layer: config/config.exs sets `validation: true` for
# MIX_ENV=test, which the NIF passes to the native core at load, before the Vulkan instance
# exists (NX_VULKAN_VALIDATION=1 does the same). Any validation message fails the run, checked
# once every test has finished; a suite that finds the layer off fails too.

ExUnit.after_suite(fn _ ->
  report = Nx.Vulkan.validation_report()

  if report.messages > 0 or not report.enabled do
    IO.puts(
      :stderr,
      "\nVulkan validation layer: #{if report.enabled, do: "on", else: "OFF (expected on)"}, " <>
        "#{report.messages} message(s); last: #{report.last_message}"
    )

    System.at_exit(fn _ -> exit({:shutdown, 1}) end)
  else
    IO.puts("Vulkan validation layer: on, 0 messages")
  end
end)

ExUnit.start()
