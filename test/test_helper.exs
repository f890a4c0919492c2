# Run the suite under the Vulkan validation layer with NX_VULKAN_VALIDATION=1 in the environment
# of the VM (scripts/test.sh does; System.put_env cannot: the native core reads the process
# environment, which os:putenv does not change). Any validation message fails the run, checked
# once every test has finished.

ExUnit.after_suite(fn _ ->
  report = Nx.Vulkan.validation_report()

  if report.messages > 0 do
    IO.puts(
      :stderr,
      "\nVulkan validation layer: #{report.messages} message(s); last: #{report.last_message}"
    )

    System.at_exit(fn _ -> exit({:shutdown, 1}) end)
  else
    IO.puts("Vulkan validation layer: #{if report.enabled, do: "on", else: "off"}, 0 messages")
  end
end)

ExUnit.start()
