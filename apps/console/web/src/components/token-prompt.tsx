import { useState, type FormEvent } from 'react';
import { useAuth } from '../api/auth-context';
import { saveToken } from '../api/token-store';

/**
 * Shown when a call was refused Unauthenticated: the services check tokens
 * and this tab has none (or an expired one). The token stays in this tab.
 */
export function TokenPrompt() {
  const { tokenWanted, tokenGiven } = useAuth();
  const [token, setToken] = useState('');
  if (!tokenWanted) return null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (token.trim() === '') return;
    saveToken(token);
    setToken('');
    tokenGiven();
  };
  return (
    <div className="overlay">
      <form className="token-prompt" onSubmit={submit} data-testid="token-prompt">
        <h2>Token required</h2>
        <p>
          This Ledgerline checks bearer tokens. Paste one (<code>ledgerline tokens create --subject ROLE</code>); it is
          kept in this tab only.
        </p>
        <textarea
          name="token"
          rows={4}
          value={token}
          onChange={(event) => setToken(event.target.value)}
          placeholder="eyJhbGciOi…"
          autoFocus
        />
        <button type="submit">Use token</button>
      </form>
    </div>
  );
}
