import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpCapture, startSmtpCapture } from '#tests/fakes/smtp.ts';

describe('SMTP capture fake', () => {
  let smtp: SmtpCapture;
  beforeAll(async () => {
    smtp = await startSmtpCapture();
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('captures a message sent with credentials and no TLS', async () => {
    const transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: false,
      ignoreTLS: true,
      auth: { user: 'any-user', pass: 'any-password' },
    });
    const pending = smtp.waitFor((m) => m.to.includes('alice@example.com'));
    await transport.sendMail({
      from: 'Switchyard <noreply@example.com>',
      to: 'Alice <Alice@Example.com>',
      subject: 'Your code',
      text: 'code 123456',
      html: '<p>code <b>123456</b></p>',
    });
    const mail = await pending;
    expect(mail.subject).toBe('Your code');
    expect(mail.from).toBe('noreply@example.com');
    expect(mail.text).toContain('123456');
    expect(mail.html).toContain('<b>123456</b>');
    expect(mail.authUser).toBe('any-user');
    expect(smtp.messages).toHaveLength(1);
  });

  it('accepts mail without authentication and resolves waitFor for an already captured message', async () => {
    const transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: false,
      ignoreTLS: true,
    });
    await transport.sendMail({ from: 'a@example.com', to: 'bob@example.com', subject: 'hi', text: 'hello' });
    const mail = await smtp.waitFor((m) => m.to.includes('bob@example.com'), 1000);
    expect(mail.authUser).toBeNull();
    expect(mail.text.trim()).toBe('hello');
  });

  it('rejects waitFor after the timeout', async () => {
    await expect(smtp.waitFor((m) => m.subject === 'never', 100)).rejects.toThrow(/no matching mail/);
  });
});

describe('findLink / findCode', () => {
  it('extracts a link from html or text and a numeric code', async () => {
    const { findCode, findLink } = await import('#tests/fakes/smtp.ts');
    const text = 'Open http://x.test/user/reset?email=a%40b.c&token=abc. Code: 123456.';
    expect(findLink({ html: '', text }, '/user/reset?')?.searchParams.get('token')).toBe('abc');
    const html = '<a href="http://x.test/user/reset?email=a%40b.c&amp;token=def">reset</a>';
    expect(findLink({ html, text: '' }, '/user/reset?')?.searchParams.get('token')).toBe('def');
    expect(findCode({ text })).toBe('123456');
    expect(findLink({ html: '', text: 'none' }, '/user/reset?')).toBeNull();
  });
});
