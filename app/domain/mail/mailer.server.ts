import type { TFunction } from 'i18next';
import nodemailer from 'nodemailer';
import { authTFor } from '#app/domain/auth/i18n.server.ts';
import { InputError } from '#app/domain/errors.ts';
import type { ConsoleServices } from '#app/services.server.ts';

/** What sending needs: ConsoleServices, or any RequestCtx (it carries `options`). */
export type MailServices = Pick<ConsoleServices, 'options' | 'mailTransport'>;

export type MailMessage = { to: string; subject: string; html: string; text: string };

/** Anything that delivers a message (nodemailer transports satisfy it). */
export type MailTransport = { sendMail(message: MailMessage & { from: string }): Promise<unknown> };

export type SmtpSettings = {
  host: string;
  port: number;
  secure: boolean;
  account: string;
  token: string;
  from: string;
};

/** The SMTP* options as nodemailer needs them: port 587 by default, SSL forced on 465 (seed 000 §9). */
export function smtpSettings(options: ConsoleServices['options']): SmtpSettings {
  const port = options.get('SMTPPort') || 587;
  const account = options.get('SMTPAccount');
  return {
    host: options.get('SMTPServer').trim(),
    port,
    secure: port === 465 || options.get('SMTPSSLEnabled'),
    account,
    token: options.get('SMTPToken'),
    from: options.get('SMTPFrom') || account,
  };
}

function transportFor(s: SmtpSettings): MailTransport {
  return nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.secure,
    ...(s.account ? { auth: { user: s.account, pass: s.token } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  }) as unknown as MailTransport;
}

/**
 * Sends one message through the configured SMTP server. Throws InputError when SMTP is not configured or the
 * server refuses (the reason is logged; the message names it briefly).
 */
export async function sendMail(
  services: MailServices,
  message: MailMessage,
  t: TFunction = authTFor(),
): Promise<void> {
  const s = smtpSettings(services.options);
  if (!services.mailTransport && !s.host) throw new InputError(t('email.smtpMissing'));
  const transport = services.mailTransport ?? transportFor(s);
  const system = services.options.get('SystemName');
  const from = s.from ? `${system} <${s.from}>` : `${system} <noreply@localhost>`;
  try {
    await transport.sendMail({ ...message, from });
  } catch (error) {
    console.error('[mail] delivery failed', error);
    const reason = error instanceof Error ? error.message : String(error);
    throw new InputError(t('email.sendFailed', { reason: reason.slice(0, 200) }));
  }
}
