// The official MCP TypeScript SDK client against ragd (mcp_test.go sets the variables): RAGD_BIN and
// RAGD_DATA_DIR (`ragd mcp` over stdio), RAGD_URL and RAGD_KEY (`ragd serve`'s /mcp); both hold
// bill_2125318_original.pdf in the collection "laws".
import test from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const question = '시행일은 공포 후 몇 개월인가요?';

async function exercise(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['ask', 'get_document', 'ingest_text', 'list_collections', 'list_documents', 'search']);
  const search = tools.find((t) => t.name === 'search');
  assert.deepEqual(search.inputSchema.required, ['query']);
  assert.match(search.inputSchema.properties.filters.description, /type=pdf/);

  let res = await client.callTool({ name: 'search', arguments: { query: '시행일 공포 후 6개월', collection: 'laws', k: 2 } });
  assert.ok(!res.isError, JSON.stringify(res.content));
  assert.ok(res.structuredContent.passages.length >= 1 && res.structuredContent.passages.length <= 2);
  assert.match(res.structuredContent.passages[0].source, /bill_2125318_original\.pdf$/);

  res = await client.callTool({ name: 'ask', arguments: { question, collection: 'laws' } });
  assert.ok(!res.isError, JSON.stringify(res.content));
  assert.match(res.structuredContent.answer, /6개월.*\[1\]/s);
  assert.equal(res.structuredContent.sources[0].n, 1);
  assert.match(res.content[0].text, /Sources:\n- \[1\] bill_2125318_original/);

  res = await client.callTool({ name: 'ask', arguments: { question, k: 21 } });
  assert.ok(res.isError);
  assert.match(res.content[0].text, /^invalid_request: /);
}

test('stdio: ragd mcp', async () => {
  const client = new Client({ name: 'ragd-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: process.env.RAGD_BIN, args: ['mcp', '--data-dir', process.env.RAGD_DATA_DIR], env: { PATH: process.env.PATH },
  }));
  try {
    await exercise(client);
  } finally {
    await client.close();
  }
});

test('streamable HTTP: /mcp with a key', async () => {
  const client = new Client({ name: 'ragd-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.RAGD_URL + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.RAGD_KEY}` } },
  }));
  try {
    await exercise(client);
  } finally {
    await client.close();
  }
});

test('streamable HTTP: a wrong key is refused', async () => {
  const client = new Client({ name: 'ragd-test', version: '1.0.0' });
  await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(process.env.RAGD_URL + '/mcp'), {
    requestInit: { headers: { Authorization: 'Bearer wrong' } },
  })), /401|nauthorized|invalid token/);
});
