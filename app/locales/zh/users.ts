/** Namespace 'users' in Chinese (default and fallback). en/users.ts must have exactly the same keys (its type). */
const users = {};

export type UsersResources = typeof users;
export default users;
