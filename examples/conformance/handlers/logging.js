// test_tool_with_logging: three info-level notifications/message while the call runs, ~50 ms apart.
// The session's logging/setLevel decides which of them reach the client.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function toolWithLogging(_input, ctx) {
  await ctx.channel.log('info', 'Tool execution started');
  await sleep(50);
  await ctx.channel.log('info', 'Tool processing data');
  await sleep(50);
  await ctx.channel.log('info', 'Tool execution completed');
  return 'Tool with logging executed successfully';
}
