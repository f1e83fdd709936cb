/** Client-safe constants of the admin users use cases (shared by users.server.ts and the /user pages). */

/** Status 3 exists in the data (meaning not shown by the seed); it can never be enabled from the console. */
export const USER_STATUS_LOCKED = 3;

export const MANAGE_ACTIONS = ['promote', 'demote', 'disable', 'enable', 'delete'] as const;
export type ManageAction = (typeof MANAGE_ACTIONS)[number];
