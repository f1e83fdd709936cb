import QRCode from 'qrcode';

/**
 * The QR code of a gateway's code_url as inline SVG, rendered on the server so the pay page shows it without
 * JavaScript. The SVG is built by `qrcode` from the text (paths only), never from user markup.
 */
export async function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', margin: 1, errorCorrectionLevel: 'M', width: 220 });
}
