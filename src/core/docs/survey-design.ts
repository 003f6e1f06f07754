/**
 * Survey design knowledge that holds across the questions of a survey family (issue 25), as data:
 * which variables carry the common groupings (age, sex, race, education, income) and which carry the
 * design (weights, strata, PSUs). Question-level retrieval reads this table; it never compares survey
 * names. A family applies to a catalog when the catalog defines all its `detect` variables.
 * Sources: NHANES analytic guidelines (CDC, 2021–2023: demographics file DEMO_L holds RIDAGEYR, RIAGENDR,
 * RIDRETH3, DMDEDUC2, INDFMPIR and the design variables WTINT2YR, WTMEC2YR, SDMVPSU, SDMVSTRA); NCSES
 * SESTAT public-use files (SDR, NSCG, NTEWS: AGEGRP, SEX/GENDER, RACETHMP, WTSURVY).
 */

/** A grouping concept: question words (lower case, {@link codebookTokens} form) → the variables that code it. */
export interface DesignGrouping {
  concept: string;
  terms: string[];
  variables: string[];
}

/** One survey family's design data. */
export interface SurveyDesign {
  family: string;
  /** The family applies when the catalog defines every one of these variables. */
  detect: string[];
  /** Variables every estimate needs (design weights, strata, PSUs). */
  design: string[];
  groupings: DesignGrouping[];
}

/** Design data per survey family. Add a family here; retrieval code does not change. */
export const SURVEY_DESIGNS: readonly SurveyDesign[] = [
  {
    family: 'NHANES',
    detect: ['SEQN', 'SDMVPSU', 'SDMVSTRA'],
    design: ['WTMEC2YR', 'WTINT2YR', 'SDMVPSU', 'SDMVSTRA'],
    groupings: [
      {
        concept: 'age',
        terms: ['age', 'aged', 'year', 'older', 'younger', 'adult', 'child', 'children', 'adolescent', 'youth', 'teen'],
        variables: ['RIDAGEYR'],
      },
      {
        concept: 'sex',
        terms: ['sex', 'men', 'women', 'man', 'woman', 'male', 'female', 'gender', 'boy', 'girl'],
        variables: ['RIAGENDR'],
      },
      {
        concept: 'race and Hispanic origin',
        terms: ['race', 'racial', 'hispanic', 'black', 'white', 'asian', 'ethnicity', 'origin'],
        variables: ['RIDRETH3'],
      },
      {
        concept: 'education',
        terms: ['education', 'educational', 'college', 'school', 'degree', 'graduate'],
        variables: ['DMDEDUC2'],
      },
      { concept: 'family income', terms: ['income', 'poverty', 'fpl', 'poor'], variables: ['INDFMPIR'] },
      { concept: 'pregnancy', terms: ['pregnant', 'pregnancy'], variables: ['RIDEXPRG'] },
    ],
  },
  {
    family: 'NCSES SESTAT',
    detect: ['WTSURVY', 'REFYR'],
    design: ['WTSURVY'],
    groupings: [
      { concept: 'age', terms: ['age', 'aged', 'older', 'younger'], variables: ['AGEGRP', 'AGEGR2'] },
      {
        concept: 'sex',
        terms: ['sex', 'men', 'women', 'man', 'woman', 'male', 'female', 'gender'],
        variables: ['SEX', 'GENDER'],
      },
      {
        concept: 'race and ethnicity',
        terms: ['race', 'racial', 'hispanic', 'black', 'white', 'asian', 'ethnicity', 'minority'],
        variables: ['RACETHMP', 'RACETHM', 'MINRTY'],
      },
    ],
  },
];
