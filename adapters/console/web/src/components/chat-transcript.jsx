// The chat's transcript items: what the operator wrote, the Assistant's text, tool activity
// (tool, arguments, result summary), notes and errors. Approval and question cards are their own
// components.
import { prettyJson, StatusBadge } from './page-kit.jsx';

// A tool result is summarised to its first lines: the full output is in the session record.
function summary(output) {
  if (!output) {
    return '';
  }
  const text = prettyJson(output, 600);
  return text;
}

export function ToolActivity({ item }) {
  const state = item.running ? 'running' : item.success ? 'ok' : 'failed';
  return (
    <details class="c-tool">
      <summary>
        Tool <code>{item.name}</code> <StatusBadge value={state} />
        {item.progress && item.running ? ` ${item.progress}` : ''}
      </summary>
      <h4>Arguments</h4>
      <pre class="c-pre">{prettyJson(item.input)}</pre>
      {!item.running && (
        <>
          <h4>Result</h4>
          <pre class="c-pre">{summary(item.output)}</pre>
        </>
      )}
    </details>
  );
}

export function TextItem({ item }) {
  if (item.kind === 'user') {
    return (
      <div class="c-msg c-msg-user">
        <span class="c-who">You</span>
        <p class="c-text">{item.text}</p>
      </div>
    );
  }
  if (item.kind === 'assistant') {
    return (
      <div class="c-msg c-msg-assistant">
        <span class="c-who">Assistant</span>
        <p class="c-text">{item.text}</p>
      </div>
    );
  }
  if (item.kind === 'error') {
    return (
      <p class="c-error" role="alert">
        {item.text}
      </p>
    );
  }
  return <p class="c-note">{item.text}</p>;
}
