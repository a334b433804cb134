import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';

/** Whether the console must ask for a token: set when the server said Unauthenticated. */
interface AuthState {
  readonly tokenWanted: boolean;
  /** Bumped when a token is given, so pages load again with it. */
  readonly generation: number;
  askForToken(): void;
  tokenGiven(): void;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [tokenWanted, setTokenWanted] = useState(false);
  const [generation, setGeneration] = useState(0);
  const askForToken = useCallback(() => setTokenWanted(true), []);
  const tokenGiven = useCallback(() => {
    setTokenWanted(false);
    setGeneration((value) => value + 1);
  }, []);
  const state = useMemo(
    () => ({ tokenWanted, generation, askForToken, tokenGiven }),
    [tokenWanted, generation, askForToken, tokenGiven],
  );
  return <AuthContext.Provider value={state}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (state === undefined) throw new Error('useAuth outside AuthProvider');
  return state;
}
