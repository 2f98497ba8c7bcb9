//! Lists of cases a run takes, read one case at a time ([`CaseList`]), and the list of a level
//! that builds each case only when it is asked for ([`Cases`]).
//!
//! A run at level `full` holds over 21,000 cases, nearly all of them payload cases
//! (`catalog::payload`): built all at once, they are tens of MiB. [`Cases`] keeps a payload
//! case as its (payload, field) pair, an index and a field, and builds the [`Case`] when a
//! worker takes it; the run drops it when the case is done. Ids, order and the cases built are
//! those of [`crate::catalog::for_level`].

use std::borrow::Cow;

use crate::catalog::{self, payload, RunLevel};
use crate::payloads::{corpus, Field, Payload};
use crate::Case;

/// An ordered list of cases, read by index: a slice or `Vec` of built cases, or a [`Cases`]
/// that builds each when asked. Indices run from 0 to `len() - 1`; an index past the end gives
/// `None` (or `false`).
pub trait CaseList: Sync {
    /// How many cases.
    fn len(&self) -> usize;

    /// Whether there is no case.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Case `i`: borrowed when it is kept built, else built now (and dropped by the caller).
    fn case(&self, i: usize) -> Option<Cow<'_, Case>>;

    /// The id of case `i` ([`Case::id`]), without building the case.
    fn id(&self, i: usize) -> Option<Cow<'_, str>>;

    /// Whether case `i` is a race ([`Case::race`]), without building the case.
    fn is_race(&self, i: usize) -> bool;
}

impl CaseList for [Case] {
    fn len(&self) -> usize {
        <[Case]>::len(self)
    }

    fn case(&self, i: usize) -> Option<Cow<'_, Case>> {
        self.get(i).map(Cow::Borrowed)
    }

    fn id(&self, i: usize) -> Option<Cow<'_, str>> {
        self.get(i).map(|c| Cow::Borrowed(c.id.as_str()))
    }

    fn is_race(&self, i: usize) -> bool {
        self.get(i).is_some_and(|c| c.race.is_some())
    }
}

/// A `Vec<Case>` or a `[Case; N]`: as its slice.
impl<T: AsRef<[Case]> + Sync> CaseList for T {
    fn len(&self) -> usize {
        self.as_ref().len()
    }

    fn case(&self, i: usize) -> Option<Cow<'_, Case>> {
        self.as_ref().case(i)
    }

    fn id(&self, i: usize) -> Option<Cow<'_, str>> {
        self.as_ref().id(i)
    }

    fn is_race(&self, i: usize) -> bool {
        self.as_ref().is_race(i)
    }
}

/// One case of a [`Cases`]: a built case, or a payload case not built yet.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// `Cases::built[i]`.
    Built(usize),
    /// The case of `Cases::corpus[i]` in this field ([`payload::case`]).
    Payload(usize, Field),
}

/// The cases of a level (and any others appended), in order, payload cases kept as their
/// (payload, field) pair and built only when asked for ([`CaseList::case`]). The hand-written
/// cases (a few hundred) are kept built.
///
/// Memory: the corpus once (about 3,100 payloads) and 16 bytes per payload case, whatever the
/// level.
#[derive(Clone, Debug, Default)]
pub struct Cases {
    built: Vec<Case>,
    corpus: Vec<Payload>,
    order: Vec<Entry>,
}

impl Cases {
    /// The cases of `level`, in the order and with the ids of [`catalog::for_level`].
    pub fn level(level: RunLevel) -> Cases {
        let mut built = catalog::all();
        if level == RunLevel::Full {
            built.extend(catalog::deeper());
        }
        let corpus = corpus();
        let order = (0..built.len())
            .map(Entry::Built)
            .chain(
                payload::pair_indices(level, &corpus)
                    .into_iter()
                    .map(|(i, f)| Entry::Payload(i, f)),
            )
            .collect();
        Cases {
            built,
            corpus,
            order,
        }
    }

    /// Append built cases (such as the transcripts of `memcert certify --replay`) after the
    /// others.
    pub fn extend(&mut self, cases: impl IntoIterator<Item = Case>) {
        for c in cases {
            self.order.push(Entry::Built(self.built.len()));
            self.built.push(c);
        }
    }

    /// Keep the cases whose id `keep` accepts, in order (the built ones left out are dropped).
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        let kept: Vec<bool> = self
            .order
            .iter()
            .map(|&e| self.entry_id(e).is_some_and(|id| keep(&id)))
            .collect();
        let mut built: Vec<Option<Case>> = std::mem::take(&mut self.built)
            .into_iter()
            .map(Some)
            .collect();
        for (e, kept) in std::mem::take(&mut self.order).into_iter().zip(kept) {
            match e {
                _ if !kept => {}
                Entry::Built(i) => {
                    if let Some(c) = built.get_mut(i).and_then(Option::take) {
                        self.order.push(Entry::Built(self.built.len()));
                        self.built.push(c);
                    }
                }
                pair @ Entry::Payload(..) => self.order.push(pair),
            }
        }
    }

    /// Every case in order, each built as it is reached.
    pub fn iter(&self) -> impl Iterator<Item = Cow<'_, Case>> + '_ {
        (0..self.order.len()).filter_map(|i| self.case(i))
    }

    /// Every id in order, no case built.
    pub fn ids(&self) -> impl Iterator<Item = Cow<'_, str>> + '_ {
        (0..self.order.len()).filter_map(|i| self.id(i))
    }

    /// Every case, built, in order.
    pub fn into_vec(self) -> Vec<Case> {
        self.iter().map(Cow::into_owned).collect()
    }

    fn entry_id(&self, e: Entry) -> Option<Cow<'_, str>> {
        match e {
            Entry::Built(i) => self.built.get(i).map(|c| Cow::Borrowed(c.id.as_str())),
            Entry::Payload(i, f) => self
                .corpus
                .get(i)
                .map(|p| Cow::Owned(payload::case_id(p, f))),
        }
    }
}

impl From<Vec<Case>> for Cases {
    fn from(cases: Vec<Case>) -> Cases {
        let mut out = Cases::default();
        out.extend(cases);
        out
    }
}

impl CaseList for Cases {
    fn len(&self) -> usize {
        self.order.len()
    }

    fn case(&self, i: usize) -> Option<Cow<'_, Case>> {
        match *self.order.get(i)? {
            Entry::Built(i) => self.built.get(i).map(Cow::Borrowed),
            Entry::Payload(i, f) => self.corpus.get(i).map(|p| Cow::Owned(payload::case(p, f))),
        }
    }

    fn id(&self, i: usize) -> Option<Cow<'_, str>> {
        self.entry_id(*self.order.get(i)?)
    }

    fn is_race(&self, i: usize) -> bool {
        match self.order.get(i) {
            Some(&Entry::Built(i)) => self.built.get(i).is_some_and(|c| c.race.is_some()),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of every case of a list, in order.
    fn json(cases: impl Iterator<Item = impl std::ops::Deref<Target = Case>>) -> Vec<String> {
        cases
            .map(|c| serde_json::to_string(&*c).unwrap() + &c.defined)
            .collect()
    }

    #[test]
    fn a_level_builds_the_cases_of_for_level_in_its_order() {
        for level in RunLevel::ALL {
            let lazy = Cases::level(level);
            let mut built = catalog::all();
            if level == RunLevel::Full {
                built.extend(catalog::deeper());
            }
            built.extend(payload::cases(level));
            assert_eq!(lazy.len(), built.len(), "{level}");
            let ids: Vec<String> = lazy.ids().map(Cow::into_owned).collect();
            let want: Vec<&str> = built.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(ids, want, "{level}");
            assert_eq!(json(lazy.iter()), json(built.iter()), "{level}");
            let races: Vec<usize> = (0..lazy.len()).filter(|&i| lazy.is_race(i)).collect();
            let want: Vec<usize> = (0..built.len())
                .filter(|&i| built[i].race.is_some())
                .collect();
            assert_eq!(races, want, "{level}");
        }
        assert_eq!(
            Cases::level(RunLevel::Quick).case(usize::MAX).map(|_| ()),
            None
        );
    }

    #[test]
    fn retain_keeps_the_order_and_extended_cases_come_last() {
        let mut cases = Cases::level(RunLevel::Quick);
        let mut extra = catalog::all().remove(0);
        extra.id = "replay/x".into();
        cases.extend([extra]);
        cases.retain(|id| {
            id.starts_with("view/file/")
                || id.starts_with("payload/traversal/plain/")
                || id.starts_with("replay/")
        });
        let ids: Vec<String> = cases.ids().map(Cow::into_owned).collect();
        let built = catalog::for_level(RunLevel::Quick);
        let mut want: Vec<String> = built
            .iter()
            .map(|c| c.id.clone())
            .filter(|id| id.starts_with("view/file/") || id.starts_with("payload/traversal/plain/"))
            .collect();
        want.push("replay/x".into());
        assert_eq!(ids, want);
        let got: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
        assert_eq!(got, want);
        assert_eq!(cases.into_vec().len(), want.len());
    }
}
