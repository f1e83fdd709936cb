import type { Key, ReactNode } from 'react';
import { Button as AriaButton, Menu, MenuItem, MenuTrigger, Popover } from 'react-aria-components';
import { useHydrated } from '#app/utils/hydrated.ts';

export type DropdownItem = { id: string; label: ReactNode; selected?: boolean; lang?: string };

export type DropdownMenuProps = {
  /** accessible name of the trigger and the menu */
  label: string;
  /** visible trigger content */
  trigger: ReactNode;
  items: DropdownItem[];
  onAction: (id: string) => void;
  /**
   * What to render before hydration / without JavaScript: the content of a <details> disclosure, normally a
   * <Form> with one submit button per item, so the same action works as a plain POST.
   */
  fallback: ReactNode;
  className?: string;
};

/** react-aria MenuTrigger + Menu once hydrated; a native <details> disclosure with a form otherwise. */
export function DropdownMenu({ label, trigger, items, onAction, fallback, className }: DropdownMenuProps) {
  const hydrated = useHydrated();
  const cls = ['dropdown', className].filter(Boolean).join(' ');
  if (!hydrated) {
    return (
      <details className={cls}>
        <summary className="btn btn-ghost">
          <span className="sr-only">{label} </span>
          {trigger}
        </summary>
        <div className="dropdown-panel">{fallback}</div>
      </details>
    );
  }
  return (
    <div className={cls}>
      <MenuTrigger>
        {/* The name is the label and the visible text ("语言 中文", "用户菜单 root"), not the label alone: a
            speech user says what they see (WCAG 2.5.3, axe label-content-name-mismatch). */}
        <AriaButton className="btn btn-ghost">
          <span className="sr-only">{label} </span>
          {trigger}
        </AriaButton>
        <Popover className="dropdown-panel" placement="bottom end">
          <Menu aria-label={label} className="menu" onAction={(key: Key) => onAction(String(key))}>
            {items.map((item) => (
              <MenuItem
                key={item.id}
                id={item.id}
                className="menu-item"
                lang={item.lang}
                data-selected={item.selected || undefined}
                textValue={typeof item.label === 'string' ? item.label : item.id}
              >
                <span aria-hidden="true" className="menu-check">
                  {item.selected ? '✓' : ''}
                </span>
                {item.label}
              </MenuItem>
            ))}
          </Menu>
        </Popover>
      </MenuTrigger>
    </div>
  );
}
