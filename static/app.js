// Progressive enhancement only: the page works without it. Choosing a free
// slot fills the booking form in place instead of reloading the page.
document.addEventListener('click', (event) => {
  const slot = event.target.closest('a.free');
  if (!slot) return;
  const url = new URL(slot.href);
  const form = document.querySelector('#book form');
  if (!form) return;
  event.preventDefault();
  form.querySelector('#start').value = url.searchParams.get('start');
  form.querySelector('#end').value = url.searchParams.get('end');
  form.querySelector('#date').value = url.searchParams.get('date');
  const room = url.searchParams.get('room');
  form.querySelectorAll('input[name=rooms]').forEach((box) => { box.checked = box.value === room; });
  form.querySelector('#title').focus();
});

// Floor plans (SPEC §28), for admins: with the placing form on the page, a
// click on the plan fills in its position as fractions of the image; the
// form (typed numbers) works the same without this script.
document.addEventListener('DOMContentLoaded', () => {
  const svg = document.getElementById('plan-svg');
  const form = document.getElementById('place-form');
  if (!svg || !form) return;
  svg.classList.add('placing');
  svg.addEventListener('click', (event) => {
    if (event.target.closest('a')) return;
    const box = svg.getBoundingClientRect();
    const x = (event.clientX - box.left) / box.width;
    const y = (event.clientY - box.top) / box.height;
    if (x < 0 || x > 1 || y < 0 || y > 1) return;
    form.querySelector('#place-x').value = x.toFixed(3);
    form.querySelector('#place-y').value = y.toFixed(3);
    form.querySelector('#place-room').focus();
  });
});
