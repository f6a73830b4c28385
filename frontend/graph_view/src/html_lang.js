// The page's language, as a screen reader and the browser's own text handling read it
// (WCAG 3.1.1): Streamlit's page says <html lang="en"> whatever the session speaks. Drawn
// by every page's frame (stockdemo/ui/language.py) with the session's language tag, sent as
// JSON text as the graph view's payload is (one shape for every component's data).

export default function (component) {
  const data = typeof component.data === "string" ? JSON.parse(component.data) : component.data;
  const lang = data?.lang;
  if (lang && document.documentElement.lang !== lang) document.documentElement.lang = lang;
}
