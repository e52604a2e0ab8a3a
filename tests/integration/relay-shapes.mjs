// The answers tests/integration/relay-fixture.mjs sends (issue 45), shared
// with the test that checks what the gateway made of them.

/** Result objects as text, exactly as they are sent. */
export const RESULTS = {
  // Whitespace, escapes, a duplicate key, a number as written.
  plain: '{ "content" : [ {"type":"text","text":"caf\\u00e9 \\"q\\" \\/ \\ud83d\\ude00 日本"} ],\t "n": 2.50, "dup": 1, "dup": 2 }',
  error: '{"content":[{"type":"text","text":"it failed"}],"isError":true}',
  // A key written with an escape: only a decoder sees "isError".
  escaped_key: '{"content":[{"type":"text","text":"escaped"}],"is\\u0045rror":true}',
  // Nesting the scan follows (under 256 levels), and past it, which the
  // reading path refuses as it always did.
  nested: `{"structuredContent":{"d":${'['.repeat(200)}1${']'.repeat(200)}},"content":[]}`,
  deep: `{"structuredContent":{"d":${'['.repeat(300)}1${']'.repeat(300)}},"content":[]}`,
  // Raw ill-formed bytes inside a string (RAW_BAD, replaced when sent).
  bad_utf8: '{"content":[{"type":"text","text":"before @@BAD@@ after"}]}',
  next_tool: '{"content":[{"type":"text","text":"first"}],"_meta":{"nextTool":{"name":"relay:echo","arguments":{"text":"second"}}}}',
  resource_link: '{"content":[{"type":"resource_link","uri":"file:///notes.txt","name":"notes"}]}',
  // Pretty-printed: line breaks between tokens (an HTTP body or an SSE
  // event's data lines may carry them; a stdio line or an event may not).
  multiline: '{\n  "content": [\r\n    {"type": "text", "text": "two\\nlines"}\n  ]\n}',
};

export const RAW_BAD = Buffer.from([0xff, 0xfe]);

export function resultOf(shape, bytes) {
  if (shape === 'huge') return `{"content":[{"type":"image","mimeType":"image/png","data":"${'QUJD'.repeat(bytes / 4)}"}]}`;
  return RESULTS[shape];
}

