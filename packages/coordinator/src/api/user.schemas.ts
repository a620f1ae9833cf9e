/** Requests and answers of the authentication and user endpoints. */
import { z } from 'zod';
import { ROLES } from '../auth/principal.js';

/** 1-64 characters; no ':' (Basic credentials split there) and no control characters. */
export const usernameSchema = z
  .string()
  .min(1, 'username must be 1-64 characters')
  .max(64, 'username must be 1-64 characters')
  .regex(/^[^:\p{Cc}]+$/u, 'username must not contain ":" or control characters');

/** Strength is checked by the service (min 8, at most 72 bytes), after the throttle for logins. */
const passwordSchema = z.string().min(1, 'password is required');

export const roleSchema = z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` });

export const credentialsBody = z.strictObject({ username: usernameSchema, password: passwordSchema });

export const changePasswordBody = z.strictObject({ currentPassword: z.string().min(1, 'currentPassword is required'), newPassword: passwordSchema });

export const createUserBody = z.strictObject({ username: usernameSchema, password: passwordSchema, role: roleSchema });

export const updateUserBody = z.strictObject({ username: usernameSchema.optional(), role: roleSchema.optional(), isDisabled: z.boolean().optional() });

export const resetPasswordBody = z.strictObject({ newPassword: passwordSchema });

export const userIdParams = z.object({ userId: z.string().min(1).max(100) });

export const userSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    role: roleSchema,
    authProvider: z.enum(['builtin', 'oidc']),
    isDisabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'User' });

export const sessionSchema = z
  .object({ token: z.string(), expiresAt: z.string().describe('ISO 8601; the token is refused after it'), user: userSchema })
  .meta({ id: 'Session' });

export const principalSchema = z
  .object({ kind: z.enum(['user', 'apiKey', 'webhook', 'anonymous']), id: z.string(), name: z.string(), role: roleSchema })
  .meta({ id: 'Principal' });

export const meSchema = z.object({ principal: principalSchema, user: userSchema.optional() }).meta({ id: 'Me' });

export const userEnvelope = z.object({ user: userSchema });
export const userListSchema = z.object({ users: z.array(userSchema) });
