// MathJax 3 configuration for pymdownx.arithmatex (generic mode).
// arithmatex wraps every formula in <span class="arithmatex">\(...\)</span> or
// <div class="arithmatex">\[...\]</div>; MathJax typesets only those elements.
// The MathJax script itself (javascripts/mathjax/tex-svg.js) is copied into the site
// at build time by docs/hooks/mathjax.py, from the django-static-mathjax package.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};
