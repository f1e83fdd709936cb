import type { TFunction } from 'i18next';
import { InputError } from '#app/domain/errors.ts';

/**
 * The one username rule (seed 000 §5 register, new-api's `max=20`): 1 to 20 characters (Unicode code points,
 * so a CJK name counts each character once), no whitespace and no control characters. Register, OAuth sign-up,
 * an admin adding or renaming a user and a user renaming themselves all check it here, with the same messages
 * (`auth:register.*`). Names given before the rule existed are kept until they are changed.
 */
export const USERNAME_MAX = 20;

export function usernameProblem(username: string): 'empty' | 'length' | 'invalid' | null {
  if (!username) return 'empty';
  if ([...username].length > USERNAME_MAX) return 'length';
  if (/[\s\p{Cc}]/u.test(username)) return 'invalid';
  return null;
}

/** Throws an InputError (field `username`) when the rule is broken; `t` is of the `auth` namespace. */
export function checkUsername(username: string, t: TFunction): void {
  const problem = usernameProblem(username);
  if (!problem) return;
  const key = {
    empty: 'register.empty',
    length: 'register.usernameLength',
    invalid: 'register.usernameInvalid',
  }[problem];
  const message = t(key);
  throw new InputError(message, { username: [message] });
}
