import { Form, useNavigation } from '@remix-run/react';
import type { ReactNode } from 'react';
import { Button } from '#app/components/ui/button.tsx';
import { pageSizes } from '#app/utils/preferences.ts';

/** The row above a list: search form and page-level buttons. */
export function ListToolbar({ children }: { children: ReactNode }) {
  return <div className="list-toolbar">{children}</div>;
}

/**
 * A GET form (works without JavaScript: the filters are in the URL). `label` names the search landmark; without
 * it the form is a plain form (e.g. a page-size chooser).
 */
export function SearchForm({
  label,
  submitLabel,
  submitVariant = 'secondary',
  className,
  children,
}: {
  label?: string;
  submitLabel: string;
  submitVariant?: 'secondary' | 'ghost';
  className?: string;
  children: ReactNode;
}) {
  const navigation = useNavigation();
  return (
    <Form
      method="get"
      role={label ? 'search' : undefined}
      aria-label={label}
      className={className ? `list-search ${className}` : 'list-search'}
    >
      {children}
      <Button type="submit" variant={submitVariant} isDisabled={navigation.state === 'loading'}>
        {submitLabel}
      </Button>
    </Form>
  );
}

/** A labelled text input of a SearchForm. */
export function SearchField({
  label,
  name,
  defaultValue,
  placeholder,
  wide,
}: {
  label: string;
  name: string;
  defaultValue: string;
  placeholder?: string;
  wide?: boolean;
}) {
  return (
    <label>
      {label}
      <input
        type="search"
        name={name}
        defaultValue={defaultValue}
        placeholder={placeholder}
        className={wide ? 'list-input list-input-wide' : 'list-input'}
      />
    </label>
  );
}

/** A labelled select of a SearchForm; `options` as [value, text] pairs. */
export function SelectField({
  label,
  name,
  defaultValue,
  options,
}: {
  label: string;
  name: string;
  defaultValue: string;
  options: readonly (readonly [string, string])[];
}) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={defaultValue} className="list-input">
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The page-size select (`page_size`, kept in the preference cookie by the loaders). */
export function PageSizeField({ label, value }: { label: string; value: number }) {
  return (
    <SelectField
      label={label}
      name="page_size"
      defaultValue={String(value)}
      options={pageSizes.map((n) => [String(n), String(n)] as const)}
    />
  );
}
