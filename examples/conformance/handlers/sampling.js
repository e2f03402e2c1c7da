// test_sampling: one sampling/createMessage request to the client, answer returned as text.
// A client without the sampling capability makes the request fail, which the tool reports as an error.

export async function sampling({ prompt }, ctx) {
  const answer = await ctx.channel.request('sampling/createMessage', {
    messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
    maxTokens: 100,
  });
  return `LLM response: ${answer?.content?.text ?? 'No response'}`;
}
