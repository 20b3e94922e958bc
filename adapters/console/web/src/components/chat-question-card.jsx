// A question the Assistant's run asked (pulse_question): its options as buttons and a free
// answer; answering continues the session as a stream (POST /api/ai/question/{id}/answer).
import { useState } from 'preact/hooks';

export default function ChatQuestionCard({ question, answered, disabled, onAnswer }) {
  const [text, setText] = useState('');
  const body = question.question || {};
  const idBase = `question-${question.question_id}`;
  const submit = (value) => {
    if (value.trim()) {
      onAnswer(value.trim());
    }
  };
  return (
    <section class="c-card c-question" aria-labelledby={`${idBase}-title`}>
      <h3 id={`${idBase}-title`}>The Assistant asks: {body.question || 'a question'}</h3>
      {answered ? (
        <p>Answered: {answered}</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            submit(text);
          }}
        >
          {Array.isArray(body.options) && body.options.length > 0 && (
            <div class="c-buttons" role="group" aria-label="Suggested answers">
              {body.options.map((option) => (
                <button type="button" disabled={disabled} onClick={() => submit(option)}>
                  {option}
                </button>
              ))}
            </div>
          )}
          <label for={`${idBase}-text`}>Your answer</label>
          <div class="c-inline">
            <input
              id={`${idBase}-text`}
              type="text"
              maxLength={4096}
              value={text}
              onInput={(e) => setText(e.currentTarget.value)}
            />
            <button type="submit" disabled={disabled || !text.trim()}>
              Answer
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
