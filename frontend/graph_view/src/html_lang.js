// The page's language, as a screen reader and the browser's own text handling read it
// (WCAG 3.1.1): Streamlit's page says <html lang="en"> whatever the session speaks. Drawn
// by every page's frame (stockdemo/ui/language.py) with the session's language tag.

export default function (component) {
  const lang = component.data?.lang;
  if (lang && document.documentElement.lang !== lang) document.documentElement.lang = lang;
}
