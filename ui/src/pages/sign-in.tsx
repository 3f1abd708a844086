import { type FormEvent, useState } from "react";
import { Button, ErrorMessage, Field } from "../components";
import { credentials, signIn } from "../credentials";

export function SignInPage({ expired, onSignedIn }: { expired: boolean; onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [key, setKey] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const withPassword = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const token = await signIn(email, password);
      credentials.set({ kind: "token", token, email });
      onSignedIn();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const withKey = (event: FormEvent) => {
    event.preventDefault();
    credentials.set({ kind: "key", key: key.trim() });
    onSignedIn();
  };

  return (
    <div className="sign-in">
      <h1>Sign in</h1>
      {expired && <p role="status">The service needs you to sign in.</p>}
      <form onSubmit={withPassword} className="card" aria-labelledby="with-password">
        <h2 id="with-password">With your e-mail and password</h2>
        <Field label="E-mail">
          {(id) => (
            <input
              id={id}
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          )}
        </Field>
        <Field label="Password">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </Field>
        <ErrorMessage error={error} />
        <Button type="submit" variant="primary" disabled={busy}>
          Sign in
        </Button>
      </form>
      <form onSubmit={withKey} className="card" aria-labelledby="with-key">
        <h2 id="with-key">With an API key</h2>
        <Field label="API key" hint="Sent as X-API-Key; the console acts in the key's project with its scopes.">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              type="password"
              autoComplete="off"
              required
              value={key}
              onChange={(event) => setKey(event.target.value)}
            />
          )}
        </Field>
        <Button type="submit" variant="primary">
          Use the key
        </Button>
      </form>
    </div>
  );
}
