import { createCipheriv, createSign, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptResource, verifyWeChatSignature } from './wechatpay.server.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const config = { platformPublicKey: publicKey, platformPublicKeyId: 'PUB_KEY_ID_1' };

function signed(body: string, timestamp = Math.floor(Date.now() / 1000), serial = 'PUB_KEY_ID_1') {
  const nonce = 'n0nce';
  const signature = createSign('RSA-SHA256')
    .update(`${timestamp}\n${nonce}\n${body}\n`)
    .sign(privateKey, 'base64');
  return { timestamp: String(timestamp), nonce, signature, serial };
}

describe('WeChat Pay v3 signature check', () => {
  it('accepts the platform key over timestamp, nonce and the exact body', () => {
    expect(verifyWeChatSignature(config, signed('{"a":1}'), '{"a":1}')).toBe(true);
  });

  it('refuses another body, another key id, a stale timestamp and missing headers', () => {
    expect(verifyWeChatSignature(config, signed('{"a":1}'), '{"a":2}')).toBe(false);
    expect(verifyWeChatSignature(config, signed('{}', undefined, 'PUB_KEY_ID_2'), '{}')).toBe(false);
    const old = Math.floor(Date.now() / 1000) - 301;
    expect(verifyWeChatSignature(config, signed('{}', old), '{}')).toBe(false);
    expect(verifyWeChatSignature(config, { timestamp: '', nonce: '', signature: '', serial: '' }, '')).toBe(
      false,
    );
  });
});

describe('AEAD_AES_256_GCM resource', () => {
  const key = '0123456789abcdef0123456789abcdef';
  function seal(text: string, aad = 'transaction') {
    const nonce = 'abcdefghijkl';
    const c = createCipheriv('aes-256-gcm', Buffer.from(key), Buffer.from(nonce));
    c.setAAD(Buffer.from(aad));
    const data = Buffer.concat([c.update(text, 'utf8'), c.final(), c.getAuthTag()]);
    return {
      algorithm: 'AEAD_AES_256_GCM',
      ciphertext: data.toString('base64'),
      nonce,
      associated_data: aad,
    };
  }

  it('opens what the APIv3 key sealed', () => {
    expect(decryptResource(key, seal('{"trade_state":"SUCCESS"}'))).toBe('{"trade_state":"SUCCESS"}');
  });

  it('throws on a flipped bit, other associated data or another key', () => {
    const r = seal('{"amount":{"total":7300}}');
    const bytes = Buffer.from(r.ciphertext, 'base64');
    bytes[3] = (bytes[3] ?? 0) ^ 1;
    expect(() => decryptResource(key, { ...r, ciphertext: bytes.toString('base64') })).toThrow();
    expect(() => decryptResource(key, { ...r, associated_data: 'other' })).toThrow();
    expect(() => decryptResource('x'.repeat(32), r)).toThrow();
  });
});
