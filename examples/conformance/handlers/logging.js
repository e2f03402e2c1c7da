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

// test_logging_tool: one info message. On 2026-07-28 it reaches the client only when the request's
// _meta names io.modelcontextprotocol/logLevel (at info or below).
export async function loggingTool(_input, ctx) {
  await ctx.channel.log('info', 'test_logging_tool ran');
  return 'Logging tool executed';
}
