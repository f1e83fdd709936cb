import type { UsersResources } from '#app/locales/zh/users.ts';

const users: UsersResources = {};

export default users;
