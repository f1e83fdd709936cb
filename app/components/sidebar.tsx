import { useLocation } from '@remix-run/react';
import {
  Book,
  BookOpen,
  ChartColumn,
  CircleDollarSign,
  Download,
  House,
  Image,
  Info,
  KeyRound,
  LayoutDashboard,
  ListChecks,
  type LucideIcon,
  MessageSquare,
  Network,
  Receipt,
  ScrollText,
  Settings,
  SquareTerminal,
  Tag,
  Ticket,
  Users,
  Wallet,
} from 'lucide-react';
import { useTranslation } from 'react-i18next';
import { SidebarToggle } from '#app/components/preference-forms.tsx';
import { Link } from '#app/components/ui/link.tsx';
import {
  isActivePath,
  type MenuItem,
  type MenuStatus,
  type MenuUser,
  sideMenuItems,
} from '#app/domain/navigation/menu.ts';

/** One icon per menu key (side menu and top navigation); chat entries share the chat icon. */
const icons: Record<string, LucideIcon> = {
  channel: Network,
  token: KeyRound,
  playground: SquareTerminal,
  chat: MessageSquare,
  detail: ChartColumn,
  redemption: Ticket,
  topup: Wallet,
  user: Users,
  order: Receipt,
  log: ScrollText,
  midjourney: Image,
  task: ListChecks,
  setting: Settings,
  version: Tag,
  home: House,
  console: LayoutDashboard,
  pricing: CircleDollarSign,
  about: Info,
  guide: BookOpen,
  usebook: Book,
  download: Download,
};

/** The icon of a menu key (undefined for an unknown key). */
export function menuIcon(itemKey: string): LucideIcon | undefined {
  return icons[itemKey.startsWith('chat-') ? 'chat' : itemKey];
}

export function MenuIcon({ itemKey }: { itemKey: string }) {
  const Icon = menuIcon(itemKey) ?? MessageSquare;
  return <Icon className="side-icon" aria-hidden="true" focusable="false" size={18} strokeWidth={2} />;
}

/** A list of menu links with icons and visible labels; `onNavigate` closes the mobile drawer. */
export function MenuLinks({
  items,
  className = 'side-link',
  onNavigate,
}: {
  items: MenuItem[];
  className?: string;
  onNavigate?: () => void;
}) {
  const { t } = useTranslation();
  const { pathname } = useLocation();
  return (
    <ul>
      {items.map((item) => {
        const label = item.label ?? t(item.labelKey);
        return (
          <li key={item.key}>
            <Link
              to={item.to}
              current={isActivePath(pathname, item.to)}
              className={className}
              data-menu-key={item.key}
              onPress={onNavigate}
            >
              <MenuIcon itemKey={item.key} />
              <span className="side-label">{label}</span>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * Side menu (seed 001 §2.3), for signed-in users only. Hidden at <= 600px by a CSS media query (the header's menu
 * button takes over), so it also holds without JavaScript. Collapsed, the labels are visually hidden but remain
 * the links' accessible names.
 */
export function Sidebar({
  user,
  status,
  collapsed,
}: {
  user: MenuUser;
  status: MenuStatus;
  collapsed: boolean;
}) {
  const { t } = useTranslation();
  const items = sideMenuItems(user, status);
  if (items.length === 0) return null;
  return (
    <nav
      id="side-menu"
      className="sidebar"
      aria-label={t('sidebar.label')}
      data-collapsed={collapsed ? 'true' : 'false'}
      data-testid="sidebar"
    >
      <MenuLinks items={items} />
      <SidebarToggle collapsed={collapsed} />
    </nav>
  );
}
