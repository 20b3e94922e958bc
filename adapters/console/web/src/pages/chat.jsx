// The Assistant: a chat whose answer streams in as it is written (POST /api/ai/chat), with the
// run's tool activity, approval cards for plans it proposes, questions it asks, and abort. The
// session id lives in the hash (#/chat/<id>), so a session can be reopened from the sessions page
// and continued (the shell passes it as `id`).
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, hasScope, stream } from '../api.js';
import ChatApprovalCard from '../components/chat-approval-card.jsx';
import ChatQuestionCard from '../components/chat-question-card.jsx';
import { TextItem, ToolActivity } from '../components/chat-transcript.jsx';
import { ErrorNote, eventData } from '../components/page-kit.jsx';
import '../components/pages.css';

function sessionFromHash() {
  const match = /^#\/chat\/([^/?]+)$/.exec(window.location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

// What a finished run left open, by the done event's outcome (the others need no note).
const kOutcomeNotes = {
  awaiting_approval: 'The run waits for a decision on the plan above.',
  awaiting_input: 'The run waits for your answer.',
  unverified:
    'The Assistant could not verify the change it made; check the resource before relying on it.',
};

// The stored transcript as the page's items: tool calls of an assistant message are paired with
// the tool results that follow them.
function itemsFromTranscript(messages) {
  const items = [];
  const open = [];
  for (const m of messages || []) {
    if (m.role === 'user' && m.content) {
      items.push({ kind: 'user', text: m.content });
    } else if (m.role === 'assistant') {
      if (m.content) {
        items.push({ kind: 'assistant', text: m.content });
      }
      for (const c of m.tool_calls || []) {
        const tool = {
          kind: 'tool',
          id: `t${items.length}`,
          name: c.name,
          input: c.input,
          running: false,
        };
        items.push(tool);
        open.push(tool);
      }
    } else if (m.role === 'tool' && m.tool_result) {
      const at = open.findIndex((t) => t.name === m.tool_result.tool_name);
      const tool = at >= 0 ? open.splice(at, 1)[0] : null;
      if (tool) {
        tool.output = m.tool_result.content;
        tool.success = !m.tool_result.is_error;
      }
    }
  }
  return items;
}

// The question a reopened session waits on: the last pulse_question result holds its id and
// text ({status: "asked", question_id, question}).
function openQuestion(messages) {
  const asked = [...(messages || [])]
    .reverse()
    .find(
      (m) => m.role === 'tool' && m.tool_result && m.tool_result.tool_name === 'pulse_question',
    );
  if (!asked) {
    return null;
  }
  const text = asked.tool_result.content || '';
  try {
    const result = JSON.parse(text.slice(text.indexOf('{')));
    return result.question_id
      ? { question_id: result.question_id, question: result.question }
      : null;
  } catch {
    return null;
  }
}

export default function ChatPage({ session, id }) {
  const [sessionId, setSessionId] = useState(() => id || sessionFromHash());
  const [kind, setKind] = useState('chat');
  const [items, setItems] = useState([]);
  const [message, setMessage] = useState('');
  const [running, setRunning] = useState(false);
  const [error, setError] = useState(null);
  const handle = useRef(null);
  // A decision taken on a card while the run that showed it still streams (the card arrives
  // with approval_needed, the run saves the session just before its done event): the session
  // is resumed once that run is done, not beside it (the server would refuse a second run).
  const resumeWhenDone = useRef(false);
  const sessionRef = useRef(sessionId);
  const canExecute = hasScope(session, 'ai:execute');

  const push = (item) => setItems((prev) => [...prev, item]);
  const update = (match, change) =>
    setItems((prev) => prev.map((it) => (match(it) ? { ...it, ...change(it) } : it)));

  function adoptSession(id) {
    sessionRef.current = id;
    setSessionId(id);
    // replaceState, not a hash assignment: the shell's router must not remount the page.
    if (sessionFromHash() !== id) {
      window.history.replaceState(null, '', `#/chat/${encodeURIComponent(id)}`);
    }
  }

  function onChatEvent(frame) {
    const msg = eventData(frame);
    if (!msg || typeof msg.type !== 'string') {
      return;
    }
    const d = msg.data || {};
    switch (msg.type) {
      case 'session':
        adoptSession(d.id);
        break;
      case 'content':
        setItems((prev) => {
          const last = prev[prev.length - 1];
          if (last && last.kind === 'assistant' && last.streaming) {
            return [...prev.slice(0, -1), { ...last, text: last.text + d.text }];
          }
          return [...prev, { kind: 'assistant', text: d.text, streaming: true }];
        });
        break;
      case 'tool_start':
        push({ kind: 'tool', id: d.id, name: d.name, input: d.input, running: true });
        break;
      case 'tool_progress':
        update(
          (it) => it.kind === 'tool' && it.id === d.id,
          () => ({ progress: d.message }),
        );
        break;
      case 'tool_end':
        update(
          (it) => it.kind === 'tool' && it.id === d.id,
          () => ({ running: false, output: d.output, success: d.success }),
        );
        break;
      case 'approval_needed':
        push({ kind: 'approval', approval: d });
        break;
      case 'question':
        push({ kind: 'question', question: d });
        break;
      case 'error':
        push({
          kind: 'error',
          text: `${d.message || 'The run failed.'}${d.code ? ` (${d.code})` : ''}`,
        });
        break;
      case 'done':
        handle.current = null;
        setRunning(false);
        setItems((prev) => prev.map((it) => (it.streaming ? { ...it, streaming: false } : it)));
        if (kOutcomeNotes[d.outcome]) {
          push({ kind: 'note', text: kOutcomeNotes[d.outcome] });
        }
        if (resumeWhenDone.current) {
          resumeWhenDone.current = false;
          resume();
        }
        break;
      default:
        break;
    }
  }

  // A stream that ends without its done event was refused (an ApiError: not configured, busy,
  // not found) or cut off; either way the run is no longer ours to wait for.
  function onChatEnd(ended, failure) {
    if (handle.current !== ended) {
      return;
    }
    handle.current = null;
    // Cut off before done: the run did not say it saved the session; the card's Continue
    // button stays for the operator.
    resumeWhenDone.current = false;
    setRunning(false);
    setItems((prev) => prev.map((it) => (it.streaming ? { ...it, streaming: false } : it)));
    if (failure) {
      setError(failure);
    }
  }

  function start(path, body) {
    setError(null);
    setRunning(true);
    let started = null;
    started = stream('POST', path, body, onChatEvent, (failure) => onChatEnd(started, failure));
    handle.current = started;
  }

  // Reopens the session named in the hash: its transcript, and the plan it waits on, if any.
  useEffect(() => {
    if (!sessionId) {
      return;
    }
    let live = true;
    call('GET', `/api/ai/sessions/${encodeURIComponent(sessionId)}`).then(
      async (detail) => {
        if (!live) {
          return;
        }
        const restored = itemsFromTranscript(detail.messages);
        setKind(detail.kind || 'chat');
        const waiting = detail.status === 'awaiting_approval' ? detail.awaiting_action : null;
        if (waiting) {
          restored.push({ kind: 'approval', approval: await pendingPlan(waiting) });
        }
        const asked = detail.status === 'awaiting_input' ? openQuestion(detail.messages) : null;
        if (asked) {
          restored.push({ kind: 'question', question: asked });
        }
        if (live) {
          setItems(restored);
        }
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, []);

  // The plan a reopened session waits on, from the action record when this session may read the
  // queue; otherwise what the session record says (id and plan hash).
  async function pendingPlan(waiting) {
    const base = {
      action_id: waiting.action_id,
      plan_hash: waiting.plan_hash,
      tool_name: waiting.tool_name,
      state: 'pending_approval',
    };
    if (!hasScope(session, 'actions:approve')) {
      return base;
    }
    try {
      const { audit } = await call('GET', `/api/actions/${encodeURIComponent(waiting.action_id)}`);
      const plan = (audit && audit.plan) || {};
      return {
        ...base,
        state: audit.state || base.state,
        risk: plan.risk,
        capability: plan.capabilityName,
        resource_id: plan.resourceId,
        approval_reason: plan.message,
        preflight: plan.preflight,
      };
    } catch {
      return base;
    }
  }

  useEffect(() => () => handle.current && handle.current.close(), []);

  // The shell keys this page by the hash's id when it renders it, and the id this page wrote
  // with replaceState is not one it saw: the navigation's plain #/chat link comes here as a hash
  // change. It starts a new chat, unless a run is streaming (leaving would cancel it): then the
  // session stays in the hash.
  useEffect(() => {
    const onHash = () => {
      if (window.location.hash !== '#/chat' || !sessionRef.current) {
        return;
      }
      if (handle.current) {
        window.history.replaceState(null, '', `#/chat/${encodeURIComponent(sessionRef.current)}`);
      } else {
        newChat();
      }
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  function send(e) {
    e.preventDefault();
    const text = message.trim();
    if (!text || running) {
      return;
    }
    setMessage('');
    push({ kind: 'user', text });
    start(
      '/api/ai/chat',
      sessionRef.current ? { message: text, session_id: sessionRef.current } : { message: text },
    );
  }

  function resume() {
    start(`/api/ai/sessions/${encodeURIComponent(sessionRef.current)}/resume`, {});
  }

  function resumeOnceIdle() {
    if (handle.current) {
      resumeWhenDone.current = true;
    } else {
      resume();
    }
  }

  function answer(item, value) {
    update(
      (it) => it === item,
      () => ({ answered: value }),
    );
    push({ kind: 'user', text: value });
    const qid = item.question.question_id;
    start(`/api/ai/question/${encodeURIComponent(qid)}/answer`, { answers: [{ id: qid, value }] });
  }

  async function abort() {
    if (!sessionRef.current) {
      // No session yet: closing the stream cancels the run on the server.
      handle.current && handle.current.close();
      handle.current = null;
      setRunning(false);
      return;
    }
    try {
      await call('POST', `/api/ai/sessions/${encodeURIComponent(sessionRef.current)}/abort`, {});
    } catch (e) {
      setError(e);
    }
  }

  function newChat() {
    handle.current && handle.current.close();
    handle.current = null;
    sessionRef.current = null;
    setSessionId(null);
    setItems([]);
    setRunning(false);
    setKind('chat');
    window.history.replaceState(null, '', '#/chat');
  }

  const readOnly = kind === 'patrol';
  return (
    <section class="c-page c-chat" aria-labelledby="chat-title">
      <div class="c-head">
        <h1 id="chat-title">Assistant</h1>
        <button type="button" onClick={newChat} disabled={running}>
          New chat
        </button>
      </div>
      {sessionId && (
        <p class="c-muted">
          Session <code class="c-wrap">{sessionId}</code>
          {readOnly ? ' (a Patrol session: read only)' : ''}
        </p>
      )}
      <ErrorNote error={error} />
      <div class="c-transcript" role="log" aria-live="polite" aria-label="Conversation">
        {items.length === 0 && <p class="c-muted">Ask about the fleet, a finding or a resource.</p>}
        {items.map((item) => {
          if (item.kind === 'tool') {
            return <ToolActivity item={item} />;
          }
          if (item.kind === 'approval') {
            return (
              <ChatApprovalCard
                approval={item.approval}
                session={session}
                decided={item.decided}
                onDecided={(outcome) => {
                  update(
                    (it) => it === item,
                    () => ({ decided: outcome }),
                  );
                  if (canExecute) {
                    resumeOnceIdle();
                  }
                }}
                onContinue={resumeOnceIdle}
              />
            );
          }
          if (item.kind === 'question') {
            return (
              <ChatQuestionCard
                question={item.question}
                answered={item.answered}
                disabled={running}
                onAnswer={(value) => answer(item, value)}
              />
            );
          }
          return <TextItem item={item} />;
        })}
        {running && (
          <p class="c-note" role="status">
            The Assistant is working…
          </p>
        )}
      </div>
      {!readOnly && (
        <form class="c-compose" onSubmit={send}>
          <label for="chat-message">Message</label>
          <textarea
            id="chat-message"
            rows={3}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                send(e);
              }
            }}
          />
          <div class="c-buttons">
            <button type="submit" class="c-primary" disabled={running || !message.trim()}>
              Send
            </button>
            {running && (
              <button type="button" class="c-danger" onClick={abort}>
                Abort
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
