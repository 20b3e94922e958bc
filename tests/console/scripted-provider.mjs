// A scripted model provider for the console's browser tests: a loopback HTTP server speaking the
// OpenAI chat-completions wire format (streamed SSE chunks, as pulse-server requests them) and
// the model list. It answers by what the conversation holds, not by call order, so Patrol's model
// pass or a tool-call preflight interleaving with a chat cannot shift the script:
//  * the last message is the user's and asks to "restart grafana": the model first establishes
//    the target (pulse_query), as the safety state machine requires before a change;
//  * the last message is that query's result: the model plans the restart (pulse_control), which
//    a controlled session holds for an approval;
//  * the last message is pulse_control's result (after the approval, the executed action): the
//    model reads the container's status back (pulse_read), as the loop requires before it may
//    claim a change worked, or, when an operator rejected the plan, says nothing changed;
//  * the last message is that read: the model answers with what it read (the verified answer);
//  * the user asks "ask me which grafana": the model asks a question (pulse_question) with two
//    options; once answered, it confirms the answer ("Noted: <answer>");
//  * the user says "say something hostile": the answer is markup and script, which the page must
//    show as text;
//  * the user says "take your time": the model stays silent (the response is held open) until
//    the client goes away, so a run can be aborted while it waits;
//  * a request offering exactly one tool (a tool-call preflight): the model calls it;
//  * anything else: a short text answer.
// Every request is logged (path, model, last user message) for the tests to assert on.
import http from 'node:http';

export const kRestartPrompt = 'restart grafana';
export const kQueryArgs = { action: 'get', resource_id: 'app-container:grafana' };
export const kReadArgs = { action: 'status', resource_id: 'app-container:grafana' };
export const kRestartArgs = {
  type: 'resource',
  resource_id: 'app-container:grafana',
  capability: 'restart',
  params: {},
  reason: 'grafana is stuck',
};
export const kModels = ['scripted-small', 'scripted-large'];
export const kQuestionPrompt = 'ask me which grafana';
export const kQuestionArgs = { question: 'Which grafana?', options: ['prod', 'staging'] };
export const kSlowPrompt = 'take your time';
export const kHostilePrompt = 'say something hostile';
// Markup a model (or the infrastructure data it quotes) may produce: the page must show it as
// text, never run or render it.
export const kHostileAnswer =
  '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>**not bold**';
const kHoldMs = 60000;

const kMaxBody = 4 * 1024 * 1024;

function chunk(model, delta, finish = null) {
  return {
    id: 'chatcmpl-console',
    object: 'chat.completion.chunk',
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function usage() {
  return {
    id: 'chatcmpl-console',
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

function textTurn(model, text) {
  return [chunk(model, { role: 'assistant', content: text }), chunk(model, {}, 'stop'), usage()];
}

function toolTurn(model, id, name, args) {
  const call = {
    index: 0,
    id,
    type: 'function',
    function: { name, arguments: JSON.stringify(args) },
  };
  return [
    chunk(model, { role: 'assistant', tool_calls: [call] }),
    chunk(model, {}, 'tool_calls'),
    usage(),
  ];
}

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m.role === 'user') {
      return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    }
  }
  return '';
}

// The assistant tool call a tool message answers, by its id.
function calledTool(messages, toolMessage) {
  for (const m of messages) {
    for (const c of m.tool_calls || []) {
      if (c.id === toolMessage.tool_call_id) {
        return c.function && c.function.name;
      }
    }
  }
  return '';
}

// What the scripted model says next, from the conversation so far.
export function scriptedTurn(request) {
  const model = request.model || 'unknown';
  const messages = Array.isArray(request.messages) ? request.messages : [];
  const tools = Array.isArray(request.tools) ? request.tools : [];
  const last = messages[messages.length - 1] || {};
  const asked = lastUserText(messages).toLowerCase().includes(kRestartPrompt);
  const answered = last.role === 'tool' ? calledTool(messages, last) : '';
  if (asked && answered === 'pulse_read') {
    const content = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
    return textTurn(
      model,
      `The restart of grafana finished; its status now: ${content.slice(0, 400)}`,
    );
  }
  if (asked && answered === 'pulse_control') {
    const content = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
    if (content.includes('rejected')) {
      return textTurn(model, 'The restart of grafana was rejected; nothing was changed.');
    }
    return toolTurn(model, 'call_read', 'pulse_read', kReadArgs);
  }
  if (asked && answered === 'pulse_query') {
    return toolTurn(model, 'call_restart', 'pulse_control', kRestartArgs);
  }
  if (asked && last.role === 'user') {
    return toolTurn(model, 'call_query', 'pulse_query', kQueryArgs);
  }
  if (last.role === 'user' && lastUserText(messages).toLowerCase().includes(kQuestionPrompt)) {
    return toolTurn(model, 'call_question', 'pulse_question', kQuestionArgs);
  }
  if (last.role === 'user' && lastUserText(messages).toLowerCase().includes(kHostilePrompt)) {
    return textTurn(model, kHostileAnswer);
  }
  const questioned = messages.some((m) =>
    (m.tool_calls || []).some((c) => c.function && c.function.name === 'pulse_question'),
  );
  if (questioned && last.role === 'user') {
    return textTurn(model, `Noted: ${lastUserText(messages)}`);
  }
  // The Assistant's and Patrol's requests offer the whole tool catalogue; a request offering a
  // single tool is a preflight, which asks for a call with the word "ready".
  if (tools.length === 1 && last.role !== 'tool') {
    const name = (tools[0].function && tools[0].function.name) || tools[0].name;
    return toolTurn(model, 'call_preflight', name, { word: 'ready' });
  }
  return textTurn(model, 'Scripted answer: nothing else to report.');
}

// Starts the provider on 127.0.0.1 and a free port. Resolves to {baseUrl, requests, close()}:
// requests is the live log, each {path, model, lastUser}.
export async function startScriptedProvider() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const parts = [];
    let size = 0;
    req.on('data', (part) => {
      size += part.length;
      if (size > kMaxBody) {
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      parts.push(part);
    });
    req.on('end', () => {
      const path = req.url.split('?')[0];
      if (req.method === 'GET' && path === '/v1/models') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data: kModels.map((id) => ({ id, object: 'model', owned_by: 'scripted' })),
          }),
        );
        return;
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end('{"error":{"message":"not found"}}');
        return;
      }
      let body;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        res
          .writeHead(400, { 'Content-Type': 'application/json' })
          .end('{"error":{"message":"bad json"}}');
        return;
      }
      const lastUser = lastUserText(body.messages || []);
      requests.push({ path, model: body.model, lastUser });
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      if (lastUser.toLowerCase().includes(kSlowPrompt)) {
        const timer = setTimeout(() => res.end(), kHoldMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      for (const frame of scriptedTurn(body)) {
        res.write(`data: ${JSON.stringify(frame)}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        // A held response (the slow prompt) would otherwise keep close() waiting.
        server.closeAllConnections();
      }),
  };
}
