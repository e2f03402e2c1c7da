// test_sampling: one sampling/createMessage request to the client, answer returned as text.
// A client without the sampling capability makes the request fail, which the tool reports as an error.

export async function sampling({ prompt }, ctx) {
  const answer = await ctx.channel.request('sampling/createMessage', {
    messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
    maxTokens: 100,
  });
  return `LLM response: ${answer?.content?.text ?? 'No response'}`;
}

// test_missing_capability: one sampling request; a 2026-07-28 request that did not declare sampling gets -32021.
export async function samplingCheck(_input, ctx) {
  const answer = await ctx.channel.request('sampling/createMessage', {
    messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }],
    maxTokens: 20,
  });
  return `LLM response: ${answer?.content?.text ?? 'No response'}`;
}
