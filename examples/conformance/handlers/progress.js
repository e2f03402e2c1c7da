// test_tool_with_progress: progress 0, 50 and 100 of 100, ~50 ms apart. The channel sends them only
// when the request carried _meta.progressToken; without one the call just takes the same time.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function toolWithProgress(_input, ctx) {
  for (const step of [0, 50, 100]) {
    await ctx.channel.progress(step, 100, `Completed step ${step} of 100`);
    if (step < 100) await sleep(50);
  }
  return 'Tool with progress executed successfully';
}
