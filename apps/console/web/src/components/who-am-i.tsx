import { consoleClient } from '../api/console-client';
import { forgetToken } from '../api/token-store';
import { useAuth } from '../api/auth-context';
import { useCall } from '../api/use-call';

/** The header's corner: the role the console acts as, and a way to drop the token. */
export function WhoAmI() {
  const { askForToken } = useAuth();
  const state = useCall(() => consoleClient.whoAmI({}), 'whoami');
  const who = state.data;
  if (who === undefined) return null;
  if (who.authEnabled && !who.authenticated) {
    return (
      <button type="button" onClick={askForToken}>
        Sign in
      </button>
    );
  }
  const signOut = () => {
    forgetToken();
    askForToken();
  };
  return (
    <span className="who" data-testid="who-am-i">
      {who.mode} · {who.authEnabled ? `role ${who.role}${who.superUser ? ' (super-user)' : ''}` : 'no authentication'}
      {who.authEnabled && (
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      )}
    </span>
  );
}
