// The official openai npm client against a running ragd (openai_test.go starts it and sets the variables):
// RAGD_URL, RAGD_KEY and RAGD_KEY2 (two keys of the server), RAGD_CHAT_LIMIT (its RAGD_RATE_LIMIT_CHAT) and
// RAGD_COLLECTION (a collection holding bill_2125318_original.pdf).
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.RAGD_URL + '/v1';
const collection = process.env.RAGD_COLLECTION;
const model = `ragd/${collection}`;
const question = '시행일은 공포 후 몇 개월인가요?';
// maxRetries 0: the client would otherwise retry a 429 by itself.
const client = new OpenAI({ baseURL, apiKey: process.env.RAGD_KEY, maxRetries: 0 });

test('models list every collection and ragd', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes('ragd'), ids.join(','));
  assert.ok(ids.includes(model), ids.join(','));
  const one = await client.models.retrieve(model);
  assert.equal(one.id, model);
});

test('a completion answers with citations, sources and usage', async () => {
  const res = await client.chat.completions.create({
    model,
    messages: [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: question }],
  });
  assert.equal(res.object, 'chat.completion');
  const content = res.choices[0].message.content;
  assert.equal(res.choices[0].finish_reason, 'stop');
  assert.match(content, /6개월/);
  assert.match(content, /\[1\]/);
  assert.match(content, /\*\*Sources\*\*\n\n- \[1\] bill_2125318_original/);
  assert.ok(res.sources.length >= 1, 'sources');
  assert.equal(res.sources[0].n, 1);
  assert.match(res.sources[0].source, /bill_2125318_original\.pdf$/);
  assert.ok(res.sources[0].page_start >= 1);
  assert.ok(res.usage.prompt_tokens > 0 && res.usage.completion_tokens > 0);
  assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
});

test('a streamed completion sends chunks with citations, sources and usage', async () => {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: [{ type: 'text', text: question }] }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let chunks = 0;
  let finish = null;
  let sources = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    chunks++;
    for (const c of chunk.choices) {
      content += c.delta.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
    if (chunk.sources) sources = chunk.sources;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(chunks >= 3, `chunks: ${chunks}`);
  assert.equal(finish, 'stop');
  assert.match(content, /6개월/);
  assert.match(content, /\*\*Sources\*\*\n\n- \[1\] bill_2125318_original/);
  assert.ok(sources && sources.length >= 1, 'sources on the last chunk');
  assert.ok(usage && usage.completion_tokens > 0, 'usage chunk');
});

test('a follow-up answers with the conversation as history', async () => {
  const first = [{ role: 'user', content: '탄소중립위원회 위원 후보 추천 단체를 법률에 명시하는 개정안이 있나요?' }];
  const res = await client.chat.completions.create({ model, messages: first });
  const followUp = await client.chat.completions.create({
    model,
    messages: [...first, res.choices[0].message, { role: 'user', content: '그 법안은 누가 대표발의했나요?' }],
  });
  assert.match(followUp.choices[0].message.content, /이수진/);
});

test('embeddings with the configured embedder, base64 (the SDK default) and float alike', async () => {
  const input = ['연차 휴가는 매년 15일입니다.', 'annual leave'];
  const b64 = await client.embeddings.create({ model: 'ragd', input });
  const float = await client.embeddings.create({ model: 'ragd', input, encoding_format: 'float' });
  assert.equal(b64.data.length, 2);
  assert.equal(b64.model, 'hash/v1/768');
  for (let i = 0; i < 2; i++) {
    assert.equal(b64.data[i].index, i);
    assert.equal(b64.data[i].embedding.length, 768);
    const a = Float32Array.from(b64.data[i].embedding);
    const f = Float32Array.from(float.data[i].embedding);
    assert.deepEqual(a, f);
    const norm = Math.sqrt(a.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-3, `norm ${norm}`);
  }
  assert.ok(b64.usage.prompt_tokens > 0);
});

test('an unknown model is a 404 in OpenAI error shape', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'ragd/no-such-collection', messages: [{ role: 'user', content: question }] }),
    (err) => err instanceof OpenAI.NotFoundError && err.status === 404 && err.code === 'not_found' && /no-such-collection/.test(err.message),
  );
});

test('a bad key is a 401', async () => {
  const bad = new OpenAI({ baseURL, apiKey: 'not-a-key', maxRetries: 0 });
  await assert.rejects(bad.models.list(), (err) => err instanceof OpenAI.AuthenticationError && err.status === 401 && err.code === 'unauthorized');
  await assert.rejects(
    bad.chat.completions.create({ model, messages: [{ role: 'user', content: question }] }),
    (err) => err instanceof OpenAI.AuthenticationError && err.status === 401,
  );
});

test('over the chat limit is a 429 with Retry-After', async () => {
  // A key of its own: the limit is per key, and the other tests spent some of the first key's.
  const other = new OpenAI({ baseURL, apiKey: process.env.RAGD_KEY2, maxRetries: 0 });
  const limit = Number(process.env.RAGD_CHAT_LIMIT);
  assert.ok(limit > 0);
  for (let i = 0; i < limit; i++) {
    const res = await other.chat.completions.create({ model: 'ragd', messages: [{ role: 'user', content: question }] });
    assert.equal(res.choices.length, 1, `request ${i + 1} of ${limit}`);
  }
  await assert.rejects(
    other.chat.completions.create({ model: 'ragd', messages: [{ role: 'user', content: question }] }),
    (err) => err instanceof OpenAI.RateLimitError && err.status === 429 && err.code === 'rate_limited' && Number(err.headers.get('retry-after')) >= 1,
  );
});
