import { useNavigate } from '@remix-run/react';
import { type ReactNode, useEffect } from 'react';
import { Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Link } from '#app/components/ui/link.tsx';
import type { ChatLink, ChatTab } from '#app/domain/content/chat-links.ts';

/**
 * No enabled token (seed 001 §2.15): the message, then /token after the delay. With JavaScript a timer
 * navigates; without it a meta refresh inside <noscript> does (inactive when scripts run, so never twice).
 */
export function NoTokenNotice({ redirectTo, delayMs }: { redirectTo: string; delayMs: number }) {
  const { t } = useTranslation('content');
  const navigate = useNavigate();
  useEffect(() => {
    const timer = window.setTimeout(() => navigate(redirectTo), delayMs);
    return () => window.clearTimeout(timer);
  }, [navigate, redirectTo, delayMs]);
  const seconds = delayMs / 1000;
  return (
    <div className="chat-message" role="alert" data-testid="chat-no-token">
      <noscript
        dangerouslySetInnerHTML={{
          __html: `<meta http-equiv="refresh" content="${seconds};url=${encodeURI(redirectTo)}">`,
        }}
      />
      <p>{t('chat.noToken')}</p>
      <p>
        {t('chat.redirecting', { seconds })} <Link to={redirectTo}>{t('chat.goTokens')}</Link>
      </p>
    </div>
  );
}

export function ChatError({ kind }: { kind: 'config-error' | 'unconfigured' }) {
  const { t } = useTranslation('content');
  return (
    <p className="chat-message" role="alert" data-testid={`chat-${kind}`}>
      {kind === 'config-error' ? t('chat.configError') : t('chat.unconfigured')}
    </p>
  );
}

export function ChatBody({ name, link }: { name: string; link: ChatLink }) {
  const { t } = useTranslation('content');
  if (link.kind === 'app') {
    return (
      <div className="chat-app">
        <p>{t('chat.appLink', { name })}</p>
        <p>
          <a className="btn btn-primary" href={link.url} rel="noreferrer" data-testid="chat-app-link">
            {t('chat.openApp')}
          </a>
        </p>
      </div>
    );
  }
  return (
    <>
      <p className="chat-hint">
        {t('chat.frameHint')}{' '}
        <a href={link.url} target="_blank" rel="noreferrer noopener">
          {t('chat.openNewTab')}
        </a>
      </p>
      <iframe
        key={link.url}
        src={link.url}
        title={t('chat.frameTitle', { name })}
        className="chat-frame"
        data-testid="chat-frame"
        allow="clipboard-read; clipboard-write; microphone"
        referrerPolicy="no-referrer"
      />
    </>
  );
}

function ChatLinks({ tabs, selected }: { tabs: ChatTab[]; selected: string | null }) {
  const { t } = useTranslation('content');
  return (
    <nav aria-label={t('chat.tabs')} className="chat-tab-links">
      {tabs.map((tab) => (
        <a
          key={tab.id}
          href={`/chat/${tab.id}`}
          aria-current={tab.id === selected ? 'page' : undefined}
          className="chat-tab-link"
        >
          {tab.name}
        </a>
      ))}
    </nav>
  );
}

/**
 * One tab per configured chat; each tab is a link to /chat/{i}. With JavaScript react-aria Tabs (arrow keys,
 * Enter opens); without it the same tabs are plain links and a keyboard-reachable link list replaces the
 * tab list (react-aria marks unselected tabs tabindex=-1). The selected chat's content sits in the tab panel,
 * rendered identically on the server and after hydration, so the frame is loaded once. With no chat selected
 * (a bad index) the chats are offered as links.
 */
export function ChatTabs({
  tabs,
  selected,
  children,
}: {
  tabs: ChatTab[];
  selected: string | null;
  children: ReactNode;
}) {
  const { t } = useTranslation('content');
  if (selected === null) {
    return (
      <div className="chat-tabs">
        {tabs.length > 0 ? <ChatLinks tabs={tabs} selected={null} /> : null}
        {children}
      </div>
    );
  }
  return (
    <div className="chat-tabs">
      <noscript>
        <style>{'.chat-tabs .chat-tablist{display:none}'}</style>
        <ChatLinks tabs={tabs} selected={selected} />
      </noscript>
      <Tabs selectedKey={selected} keyboardActivation="manual">
        <TabList aria-label={t('chat.tabs')} className="chat-tablist">
          {tabs.map((tab) => (
            <Tab key={tab.id} id={tab.id} href={`/chat/${tab.id}`} className="chat-tab">
              {tab.name}
            </Tab>
          ))}
        </TabList>
        <TabPanel id={selected} className="chat-panel">
          {children}
        </TabPanel>
      </Tabs>
    </div>
  );
}
